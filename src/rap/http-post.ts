import { type ClientRequest, type OutgoingHttpHeaders, request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { urlToHttpOptions } from "node:url";

/**
 * `{base}/cancel_tool_call` under the tool server's base URL (never the toolset's `endpoint`): `https://h/tools`
 * and `https://h/tools/` both give `https://h/tools/cancel_tool_call`; query and fragment are dropped.
 */
export function cancelUrl(base: string | URL): URL {
  const url = new URL(base);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`tool server base URL must be http or https: ${url.href}`);
  }
  url.search = "";
  url.hash = "";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/cancel_tool_call`;
  return url;
}

/** Where a server's notices go, resolved once: a POST then costs no URL parsing. */
export interface NoticeTarget {
  readonly url: URL;
  readonly options: RequestOptions;
  readonly send: typeof httpRequest;
}

export function noticeTarget(baseUrl: string): NoticeTarget {
  const url = cancelUrl(baseUrl);
  return { url, options: { ...urlToHttpOptions(url), method: "POST" }, send: url.protocol === "https:" ? httpsRequest : httpRequest };
}

type NoticeDone = (error: Error | undefined, status: number) => void;

/**
 * POSTs one cancel notice with node's own HTTP client, a fraction of fetch's CPU per POST. A redirect is
 * not followed. `done` gets the status once the response ended, or an error (maybe a second: keep the first).
 */
export function postNotice(target: NoticeTarget, headers: OutgoingHttpHeaders, body: string, done: NoticeDone): ClientRequest {
  const fail = (error: Error) => done(error, 0);
  const request = target.send({ ...target.options, headers }, (response) => {
    response.on("error", fail);
    // Reading to the end lets the keep-alive connection be reused.
    response.on("end", () => done(undefined, response.statusCode ?? 0));
    response.on("close", () => {
      if (!response.complete) fail(new Error("the connection closed before the response ended"));
    });
    response.resume();
  });
  request.on("error", fail);
  request.end(body);
  return request;
}

/** One POST through a fetch (invocations; notices, when given one): its status once the body is read (the connection reused). */
export async function postWithFetch(post: typeof fetch, url: URL, init: RequestInit): Promise<number> {
  // A redirect could carry the credentials elsewhere; its status is the outcome.
  const response = await post(url, { ...init, method: "POST", redirect: "manual" });
  await response.arrayBuffer();
  return response.status;
}
