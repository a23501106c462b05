import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeUtf8 } from "./cancel-endpoint.js";
import { type Answer, type BodyRead, CancelEndpointCore, type CancelEndpointOptions } from "./endpoint-core.js";

export type NodeCancelHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** How long a rejected body may keep draining before the socket is cut. */
const DRAIN_MS = 1_000;

/**
 * The same endpoint for `node:http` (and Express and Fastify, which hand out the same
 * objects). It reads the body straight from the socket, without building a Web Request.
 */
export function createNodeCancelHandler(options: CancelEndpointOptions): NodeCancelHandler {
  const core = new CancelEndpointCore(options);
  return (request, response) => {
    const headers = {
      get(name: string): string | null {
        const value = request.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    };
    core
      .answer(
        {
          method: request.method ?? "",
          url: request.url ?? "/",
          headers,
          remoteAddress: request.socket.remoteAddress,
        },
        (limit, timeoutMs) => readNodeBody(request, limit, timeoutMs),
      )
      .then(
        (answer) => write(request, response, answer),
        () => write(request, response, { status: 500, message: "internal error\n", headers: {}, close: true }),
      );
  };
}

function write(request: IncomingMessage, response: ServerResponse, answer: Answer): void {
  if (response.headersSent) return;
  const headers: Record<string, string> = { "cache-control": "no-store", ...answer.headers };
  if (answer.close) headers.connection = "close";
  if (answer.status === 200) {
    response.writeHead(200, { ...headers, "content-length": "0" });
    response.end();
    return;
  }
  const body = Buffer.from(answer.message);
  response.writeHead(answer.status, {
    ...headers,
    "content-type": "text/plain; charset=utf-8",
    "content-length": String(body.byteLength),
  });
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

function readNodeBody(request: IncomingMessage, limit: number, timeoutMs: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (read: BodyRead) => {
      clearTimeout(timer);
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onAbort);
      request.off("close", onAbort);
      if (!read.ok) request.pause();
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) finish({ ok: false, problem: "too-large" });
      else chunks.push(chunk);
    };
    const onEnd = () => finish(decodeUtf8(chunks, size));
    const onAbort = () => finish({ ok: false, problem: "aborted" });
    const timer = setTimeout(() => finish({ ok: false, problem: "timeout" }), timeoutMs);
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onAbort);
    request.on("close", onAbort);
  });
}
