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
  return embeddedStream<AnyMessage>((writeFailed) => {
    const encoder = new TextEncoder();
    const writer = output.getWriter();
    const reader = input.getReader();

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

    return {
      writer,
      reader,
      send,
      async read(received) {
        const splitter = jsonLineSplitter(
          { value: received, problem: (problem) => send(framingErrorResponse(problem)) },
          options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
        );
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          splitter.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
        }
        splitter.end();
      },
      afterWrite() {
        if (!flushedEarly) return undefined;
        flushedEarly = false;
        return new Promise<void>((resolve) => setImmediate(resolve));
      },
      flush: endOfTurn,
    };
  });
}
