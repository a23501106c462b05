import { DEFAULT_MAX_LINE_BYTES, framingErrorResponse, jsonLineSplitter } from "../wire/index.js";
import { type Cancellation, type CancellationOptions, createCancellation } from "./cancellation.js";
import { otherSide } from "./methods.js";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import type { MessageStream } from "./sdk-stream.js";

const attach = Symbol("acp-cancel attach");

/** Output held within one turn of the event loop before it leaves anyway (about a pipe buffer's quarter). */
const FLUSH_CHARS = 16 * 1024;

export interface NdJsonStreamOptions {
  maxLineBytes?: number;
}

/** A stream whose engine is built in: `withCancellation` attaches it instead of wrapping. */
export interface CancellableNdJsonStream extends MessageStream {
  readable: ReadableStream<AnyMessage>;
  writable: WritableStream<AnyMessage>;
  [attach](options: CancellationOptions): Cancellation;
}

export function hasBuiltInEngine(stream: unknown): stream is CancellableNdJsonStream {
  return typeof stream === "object" && stream !== null && attach in stream;
}

export function attachEngine(stream: CancellableNdJsonStream, options: CancellationOptions): Cancellation {
  return stream[attach](options);
}

/**
 * A drop-in for the SDK's `ndJsonStream(output, input)` with the engine inline (one pass, no
 * second stream layer): `withCancellation` attaches its engine; without one it is a plain stream.
 */
export function ndJsonStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  options: NdJsonStreamOptions = {},
): CancellableNdJsonStream {
  const encoder = new TextEncoder();
  const writer = output.getWriter();
  let cancellation: Cancellation | undefined;
  let toApp!: ReadableStreamDefaultController<AnyMessage>;
  let appReading = true;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  // The first message of an event-loop turn leaves at once; the rest of the turn leave in one
  // write, every FLUSH_CHARS at the most. After such an early flush the app's next write yields
  // to the next turn (a write completes on a nextTick, after the microtasks), letting answers in.
  let pending = "";
  let batching = false;
  let flushedEarly = false;
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const send = (text: string) => {
    writer.write(encoder.encode(text)).catch(() => {
      cancellation?.engine.close(otherSide(cancellation.role), "writing to the peer failed");
    });
  };
  const sendPending = () => {
    const text = pending;
    pending = "";
    send(text);
  };
  const endOfTurn = () => {
    batching = false;
    if (pending !== "") sendPending();
  };
  const toWire = (message: unknown) => {
    const line = `${JSON.stringify(message)}\n`;
    if (batching) {
      pending += line;
      if (pending.length >= FLUSH_CHARS) {
        sendPending();
        flushedEarly = true;
      }
      return;
    }
    batching = true;
    setImmediate(endOfTurn);
    send(line);
  };
  const toLocal = (message: unknown) => {
    if (appReading) toApp.enqueue(message as AnyMessage);
  };
  const fromWire = (value: unknown) => {
    if (cancellation === undefined) toLocal(value);
    else cancellation.engine.receive(otherSide(cancellation.role), value);
  };
  const splitter = jsonLineSplitter(
    { value: fromWire, problem: (problem) => toWire(framingErrorResponse(problem)) },
    options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
  );

  const pump = async () => {
    reader = input.getReader();
    let detail = "the peer closed the connection";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        splitter.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
      splitter.end();
    } catch (error) {
      detail = `the connection to the peer failed: ${String(error)}`;
    } finally {
      if (cancellation !== undefined) cancellation.engine.close(otherSide(cancellation.role), detail);
      if (appReading) {
        appReading = false;
        toApp.close();
      }
    }
  };

  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      toApp = controller;
      void pump();
    },
    cancel(reason) {
      appReading = false;
      cancellation?.engine.close(cancellation.role, "the local app stopped reading");
      void reader?.cancel(reason).catch(() => {});
    },
  });
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      if (cancellation === undefined) toWire(message);
      else cancellation.engine.receive(cancellation.role, message);
      if (!flushedEarly) return undefined;
      flushedEarly = false;
      return nextTurn();
    },
    close() {
      cancellation?.engine.close(cancellation.role, "the local app closed the connection");
      if (pending !== "") endOfTurn();
      void writer.close().catch(() => {});
    },
    abort(reason) {
      cancellation?.engine.close(cancellation.role, `the local app aborted the connection: ${String(reason)}`);
      void writer.abort(reason).catch(() => {});
    },
  });
  return {
    readable,
    writable,
    [attach](cancellationOptions) {
      if (cancellation !== undefined) throw new Error("acp-cancel: this stream already has an engine attached");
      cancellation = createCancellation(cancellationOptions, { toLocal, toRemote: toWire });
      return cancellation;
    },
  };
}
