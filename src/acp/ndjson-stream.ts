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
 * A drop-in replacement for the SDK's `ndJsonStream(output, input)` with the cancellation
 * engine inline: bytes are framed, parsed and seen by the engine in one pass, with no
 * second stream layer between the app and the wire. Handed to an app adopted with
 * `withCancellation`, it is attached rather than wrapped; without an engine attached it is
 * a plain ndjson stream.
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

  // The first message of a turn of the event loop leaves at once (no latency when alone);
  // the ones that follow it in the same turn leave together in one write (one syscall for
  // many answers under load). A long turn (10,000 cancels from one abort) does not hold its
  // output to the end: every FLUSH_CHARS leave at once, so the peer works on them while this
  // side produces the rest. A write in flight completes on a nextTick, which waits for the
  // microtasks to drain, so while the app writes from microtasks an early flush would only
  // queue: the app's next write yields to the next turn instead (letting the peer's answers in).
  let pending = "";
  let batching = false;
  let flushedEarly = false;
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const send = (text: string) => {
    writer.write(encoder.encode(text)).catch(() => {
      cancellation?.engine.close(otherSide(cancellation.role), "writing to the peer failed");
    });
  };
  const endOfTurn = () => {
    batching = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    send(text);
  };
  const flush = () => {
    if (pending !== "") endOfTurn();
  };
  const toWire = (message: unknown) => {
    const line = `${JSON.stringify(message)}\n`;
    if (batching) {
      pending += line;
      if (pending.length >= FLUSH_CHARS) {
        const text = pending;
        pending = "";
        send(text);
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
      flush();
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
