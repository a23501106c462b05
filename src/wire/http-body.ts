import type { IncomingMessage } from "node:http";

// A small JSON request's body on node:http (RAP's cancel notice, the A2A guardian's question): bounded in size
// and time, strict UTF-8, and a refused request's rest drained only briefly.

export type BodyRead =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly problem: "too-large" | "timeout" | "not-utf8" | "aborted" };

/** How long a refused request may keep draining its body before the socket is cut. */
export const DRAIN_MS = 1_000;

/** Strict UTF-8: a body with invalid bytes is rejected, not repaired into other ids. One decoder serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

export function decodeUtf8(chunks: readonly Uint8Array[], size: number): BodyRead {
  try {
    return { ok: true, text: UTF8.decode(Buffer.concat(chunks, size)) };
  } catch {
    return { ok: false, problem: "not-utf8" };
  }
}

/**
 * Reads `request`'s body, calling `done` once. A chunked body names no length: it is refused the
 * moment it passes `limit`, not at its end. A refused body is paused (see {@link drainThenCut}).
 */
export function readNodeBody(request: IncomingMessage, limit: number, timeoutMs: number, done: (read: BodyRead) => void): void {
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
    if (finished) return; // a refused body, drained before the socket is cut
    size += chunk.byteLength;
    if (size > limit) finish({ ok: false, problem: "too-large" });
    else chunks.push(chunk);
  });
  request.on("end", () => finish(decodeUtf8(chunks, size)));
  for (const event of ["error", "close"]) request.on(event, () => finish({ ok: false, problem: "aborted" }));
}

/** Once a refusal is written: lets the client finish sending so it reads the status, but not for long. */
export function drainThenCut(request: IncomingMessage): void {
  if (request.readableEnded) return;
  request.resume();
  const cut = setTimeout(() => request.socket.destroy(), DRAIN_MS);
  cut.unref();
  request.once("end", () => clearTimeout(cut));
  request.once("close", () => clearTimeout(cut));
}
