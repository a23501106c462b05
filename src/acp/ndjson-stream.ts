import { DEFAULT_MAX_LINE_BYTES, framingErrorResponse, jsonLineSplitter } from "../wire/index.js";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import { embeddedStream, type MessageStream } from "./cancellable-stream.js";

/** Output held within one turn of the event loop before it leaves anyway (about a pipe buffer's quarter). */
const FLUSH_CHARS = 16 * 1024;

export interface NdJsonStreamOptions {
  maxLineBytes?: number;
}

/**
 * A drop-in for the SDK's `ndJsonStream(output, input)` with the engine inline (one pass, no
 * second stream layer): `withCancellation` attaches its engine; without one it is a plain stream.
 */
export function ndJsonStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  options: NdJsonStreamOptions = {},
): MessageStream<AnyMessage> {
  return embeddedStream<AnyMessage, Uint8Array>((fromPeer, writeFailed) => {
    const encoder = new TextEncoder();
    const writer = output.getWriter();

    // The first message of an event-loop turn leaves at once; the rest of the turn leave in one
    // write, every FLUSH_CHARS at the most. After such an early flush the app's next write yields
    // to the next turn (a write completes on a nextTick, after the microtasks), letting answers in.
    let pending = "";
    let batching = false;
    let flushedEarly = false;
    const flush = () => {
      const text = pending;
      pending = "";
      writer.write(encoder.encode(text)).catch(writeFailed);
    };
    const endOfTurn = () => {
      batching = false;
      if (pending !== "") flush();
    };
    const send = (message: unknown) => {
      pending += `${JSON.stringify(message)}\n`;
      if (!batching) {
        batching = true;
        setImmediate(endOfTurn);
        flush();
      } else if (pending.length >= FLUSH_CHARS) {
        flush();
        flushedEarly = true;
      }
    };

    const splitter = jsonLineSplitter(
      { value: fromPeer, problem: (problem) => send(framingErrorResponse(problem)) },
      options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    );
    return {
      writer,
      reader: input.getReader(),
      send,
      received: (chunk) => splitter.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
      ended: () => splitter.end(),
      afterWrite() {
        if (!flushedEarly) return undefined;
        flushedEarly = false;
        return new Promise<void>((resolve) => setImmediate(resolve));
      },
      flush: endOfTurn,
    };
  });
}
