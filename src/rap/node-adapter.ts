import type { IncomingMessage, ServerResponse } from "node:http";
import { drainThenCut, readNodeBody } from "../wire/index.js";
import { type Answer, answerHeaders, CancelEndpointCore, type CancelEndpointOptions, type NoticeRequest } from "./endpoint-core.js";

export type NodeCancelHandler = (request: IncomingMessage, response: ServerResponse) => void;

const OK_HEADERS = ["cache-control", "no-store", "content-length", "0"];

/**
 * The same endpoint for `node:http` (Express, Fastify): the body read straight from the socket, no Web
 * Request built, and no promise when the verify function is synchronous.
 */
export function createNodeCancelHandler(options: CancelEndpointOptions): NodeCancelHandler {
  const core = new CancelEndpointCore(options);
  return (request, response) => {
    const notice = noticeRequest(request);
    const early = core.precheck(notice);
    if (early !== undefined) return write(request, response, early);
    readNodeBody(request, core.bodyLimit, core.bodyTimeoutMs, (body) => {
      const answer = core.complete(notice, body);
      if (!(answer instanceof Promise)) return write(request, response, answer);
      answer.then(
        (a) => write(request, response, a),
        () => write(request, response, { status: 500, message: "internal error\n", headers: {}, close: true }),
      );
    });
  };
}

/** The endpoint's view of an IncomingMessage. */
function noticeRequest(request: IncomingMessage): NoticeRequest {
  const get = (name: string) => {
    const value = request.headers[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  };
  return { method: request.method ?? "", url: request.url ?? "/", headers: { get }, remoteAddress: request.socket.remoteAddress };
}

function write(request: IncomingMessage, response: ServerResponse, answer: Answer): void {
  if (response.headersSent) return;
  if (answer.status === 200) {
    response.writeHead(200, OK_HEADERS);
    response.end();
    return;
  }
  const body = Buffer.from(answer.message);
  response.writeHead(answer.status, { ...answerHeaders(answer), "content-length": String(body.byteLength) });
  response.end(body);
  if (answer.close) drainThenCut(request);
}
