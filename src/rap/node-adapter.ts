import type { IncomingMessage, ServerResponse } from "node:http";
import { type Answer, answerHeaders, type BodyRead, CancelEndpointCore, type CancelEndpointOptions, decodeUtf8, type NoticeRequest } from "./endpoint-core.js";

export type NodeCancelHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** How long a rejected body may keep draining before the socket is cut. */
const DRAIN_MS = 1_000;
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
  if (answer.close && !request.readableEnded) {
    // Let the client finish sending so it reads the status, but not for long.
    request.resume();
    const cut = setTimeout(() => request.socket.destroy(), DRAIN_MS);
    cut.unref();
    request.once("end", () => clearTimeout(cut));
    request.once("close", () => clearTimeout(cut));
  }
}

function readNodeBody(request: IncomingMessage, limit: number, timeoutMs: number, done: (read: BodyRead) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (read: BodyRead) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (!read.ok) request.pause();
    done(read);
  };
  const timer = setTimeout(() => finish({ ok: false, problem: "timeout" }), timeoutMs);
  request.on("data", (chunk: Buffer) => {
    if (finished) return; // a rejected body drained before the socket is cut
    size += chunk.byteLength;
    if (size > limit) finish({ ok: false, problem: "too-large" });
    else chunks.push(chunk);
  });
  request.on("end", () => finish(decodeUtf8(chunks, size)));
  for (const event of ["error", "close"]) request.on(event, () => finish({ ok: false, problem: "aborted" }));
}
