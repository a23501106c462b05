import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * POSTs one cancel notice with node's own HTTP client and resolves with the status once the
 * response has ended. Used when no `fetch` is configured: per POST it costs a fraction of
 * the global fetch's CPU, which is what bounds a fan-out to a hundred servers (docs/rap.md).
 * Like `redirect: "manual"`, a redirect is not followed: its status is the outcome. Rejects
 * with the socket's error, or with `signal.reason` once the signal aborts.
 */
export function postNotice(url: URL, headers: Headers, body: string, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) => reject(signal.aborted ? signal.reason : error);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const outgoing: Record<string, string> = { "content-length": String(Buffer.byteLength(body)) };
    headers.forEach((value, name) => {
      outgoing[name] = value;
    });
    const request = send(url, { method: "POST", headers: outgoing, signal }, (response) => {
      response.on("error", fail);
      // Reading to the end lets the keep-alive connection be reused.
      response.on("end", () => resolve(response.statusCode ?? 0));
      response.on("close", () => {
        if (!response.complete) fail(new Error("the connection closed before the response ended"));
      });
      response.resume();
    });
    request.on("error", fail);
    request.end(body);
  });
}
