import { type BodyRead, decodeUtf8 } from "../wire/index.js";
import { answerHeaders, CancelEndpointCore, type CancelEndpointOptions } from "./endpoint-core.js";

/** `info`: what a Web-standard server can tell the handler besides the Request. */
export type CancelHandler = (request: Request, info?: { readonly remoteAddress?: string | undefined }) => Promise<Response>;

/**
 * `POST /cancel_tool_call` as a Web-standard handler, for Hono, Deno, Bun or any fetch-style server.
 * Every authentic, well-formed notice gets 200 with an empty body, found or not.
 */
export function createCancelHandler(options: CancelEndpointOptions): CancelHandler {
  const core = new CancelEndpointCore(options);
  return async (request, info) => {
    const notice = { method: request.method, url: request.url, headers: request.headers, remoteAddress: info?.remoteAddress };
    const answer = core.precheck(notice) ?? (await core.complete(notice, await readWebBody(request.body, core)));
    return new Response(answer.status === 200 ? null : answer.message, { status: answer.status, headers: answerHeaders(answer) });
  };
}

async function readWebBody(body: ReadableStream<Uint8Array> | null, core: CancelEndpointCore): Promise<BodyRead> {
  if (body === null) return { ok: true, text: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const sink = new WritableStream<Uint8Array>({
    write(chunk) {
      size += chunk.byteLength;
      // Failing the sink cancels the body: nothing more is read.
      if (size > core.bodyLimit) throw new RangeError("body too large");
      chunks.push(chunk);
    },
  });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), core.bodyTimeoutMs);
  try {
    await body.pipeTo(sink, { signal: deadline.signal });
  } catch {
    if (size > core.bodyLimit) return { ok: false, problem: "too-large" };
    return { ok: false, problem: deadline.signal.aborted ? "timeout" : "aborted" };
  } finally {
    clearTimeout(timer);
  }
  return decodeUtf8(chunks, size);
}
