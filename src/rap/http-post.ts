import { type ClientRequest, type OutgoingHttpHeaders, request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { urlToHttpOptions } from "node:url";

/** Where a server's notices go, resolved once: a POST then costs no URL parsing. */
export interface NoticeTarget {
  readonly url: URL;
  readonly options: RequestOptions;
  readonly send: typeof httpRequest;
}

export function noticeTarget(url: URL): NoticeTarget {
  const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
  const options: RequestOptions = { protocol, hostname, port, path, method: "POST", ...(auth === undefined ? {} : { auth }) };
  return { url, options, send: url.protocol === "https:" ? httpsRequest : httpRequest };
}

/** Called once: with the status once the response has ended, or with the error. */
type NoticeDone = (error: Error | undefined, status: number) => void;

/**
 * POSTs one cancel notice with node's own HTTP client, a fraction of the global fetch's CPU per POST
 * (what bounds a fan-out to a hundred servers, docs/rap.md). A redirect is not followed: its status is
 * the outcome. `destroy(error)` on the returned request ends it with that error.
 */
export function postNotice(target: NoticeTarget, headers: OutgoingHttpHeaders, body: string, done: NoticeDone): ClientRequest {
  let settled = false;
  const finish = (error: Error | undefined, status: number) => {
    if (settled) return;
    settled = true;
    done(error, status);
  };
  const fail = (error: Error) => finish(error, 0);
  const request = target.send({ ...target.options, headers }, (response) => {
    response.on("error", fail);
    // Reading to the end lets the keep-alive connection be reused.
    response.on("end", () => finish(undefined, response.statusCode ?? 0));
    response.on("close", () => {
      if (!response.complete) fail(new Error("the connection closed before the response ended"));
    });
    response.resume();
  });
  request.on("error", fail);
  request.end(body);
  return request;
}
