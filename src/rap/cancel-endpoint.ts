import { type Answer, answerHeaders, type BodyRead, CancelEndpointCore, type CancelEndpointOptions } from "./endpoint-core.js";

/** What a Web-standard server can tell the handler besides the Request. */
export interface RequestInfo {
  readonly remoteAddress?: string | undefined;
}

export type CancelHandler = (request: Request, info?: RequestInfo) => Promise<Response>;

/**
 * `POST /cancel_tool_call` as a Web-standard handler, for Hono, Deno, Bun or any fetch-style server.
 * Every authentic, well-formed notice gets 200 with an empty body, found or not.
 */
export function createCancelHandler(options: CancelEndpointOptions): CancelHandler {
  const core = new CancelEndpointCore(options);
  return async (request, info) => {
    const answer = await core.answer(
      { method: request.method, url: request.url, headers: request.headers, remoteAddress: info?.remoteAddress },
      (limit, timeoutMs) => readWebBody(request.body, limit, timeoutMs),
    );
    return toResponse(answer);
  };
}

function toResponse(answer: Answer): Response {
  return new Response(answer.status === 200 ? null : answer.message, { status: answer.status, headers: answerHeaders(answer) });
}

async function readWebBody(body: ReadableStream<Uint8Array> | null, limit: number, timeoutMs: number): Promise<BodyRead> {
  if (body === null) return { ok: true, text: "" };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const stop = (problem: "too-large" | "timeout"): BodyRead => {
    reader.cancel().catch(() => undefined);
    return { ok: false, problem };
  };
  try {
    while (true) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === "timeout") return stop("timeout");
      if (next.done) break;
      size += next.value.byteLength;
      if (size > limit) return stop("too-large");
      chunks.push(next.value);
    }
  } catch {
    return { ok: false, problem: "aborted" };
  } finally {
    clearTimeout(timer);
  }
  return decodeUtf8(chunks, size);
}

/** Strict UTF-8: a body with invalid bytes is rejected, not repaired into other ids. One decoder serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

export function decodeUtf8(chunks: readonly Uint8Array[], size: number): BodyRead {
  const bytes = chunks.length === 1 ? (chunks[0] as Uint8Array) : concat(chunks, size);
  try {
    return { ok: true, text: UTF8.decode(bytes) };
  } catch {
    return { ok: false, problem: "not-utf8" };
  }
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
