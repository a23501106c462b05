import { type Cancellation, type CancellationOptions, createCancellation } from "./cancellation.js";
import { otherSide } from "./methods.js";

/** The object-level stream an `@agentclientprotocol/sdk` app connects to (structurally typed). */
export interface MessageStream<M = unknown> {
  readable: ReadableStream<M>;
  writable: WritableStream<M>;
}

export function isMessageStream(value: unknown): value is MessageStream {
  const candidate = value as Partial<MessageStream> | null | undefined;
  return candidate?.readable instanceof ReadableStream && candidate.writable instanceof WritableStream;
}

/** The peer's side of an embedded connection: what the app's stream sends to and reads from. */
export interface PeerEnd<C> {
  /** Closed or aborted with the app's writable; the reader is cancelled when the app stops reading. */
  readonly writer: Pick<WritableStreamDefaultWriter, "close" | "abort">;
  readonly reader: ReadableStreamDefaultReader<C>;
  send(message: unknown): void;
  /** A chunk read from the peer: its messages go to the `fromPeer` given to `connect`. */
  received(chunk: C): void;
  ended?(): void;
  /** After each write of the app: what its next write waits for, if anything. */
  afterWrite?(): Promise<void> | undefined;
  /** Sends what is still held, before the writer closes. */
  flush?(): void;
}

/** A property, not a table keyed by the stream: a copy such as `{ ...stream, readable: tapped }` still attaches inline. */
const attachKey = Symbol("acp-cancel attach");

type Attachable<M = unknown> = MessageStream<M> & { [attachKey]?: (options: CancellationOptions) => Cancellation };

/** The stream an app in this process connects to, before the peer's end `connect` makes: plain until an engine attaches. */
export function embeddedStream<M, C = unknown>(
  connect: (fromPeer: (message: unknown) => void, writeFailed: (error: unknown) => void) => PeerEnd<C>,
): Required<Attachable<M>> {
  let cancellation: Cancellation | undefined;
  let toApp!: ReadableStreamDefaultController<M>;
  let appReading = true;
  const sideGone = (local: boolean, detail: string) => {
    if (cancellation !== undefined) cancellation.engine.close(local ? cancellation.role : otherSide(cancellation.role), detail);
  };
  const toLocal = (message: unknown) => {
    if (appReading) toApp.enqueue(message as M);
  };
  const fromPeer = (message: unknown) => {
    if (cancellation === undefined) toLocal(message);
    else cancellation.engine.receive(otherSide(cancellation.role), message);
  };
  const peer = connect(fromPeer, (error) => sideGone(false, `writing to the peer failed: ${String(error)}`));
  const pump = async () => {
    let detail = "the peer closed the connection";
    try {
      for (;;) {
        const { value, done } = await peer.reader.read();
        if (done) break;
        peer.received(value);
      }
      peer.ended?.();
    } catch (error) {
      detail = `the connection to the peer failed: ${String(error)}`;
    } finally {
      sideGone(false, detail);
      if (appReading) {
        appReading = false;
        toApp.close();
      }
    }
  };
  const readable = new ReadableStream<M>({
    start(controller) {
      toApp = controller;
      void pump();
    },
    cancel(reason) {
      appReading = false;
      sideGone(true, "the local app stopped reading");
      void peer.reader.cancel(reason).catch(() => {});
    },
  });
  const writable = new WritableStream<M>({
    write(message) {
      if (cancellation === undefined) peer.send(message);
      else cancellation.engine.receive(cancellation.role, message);
      return peer.afterWrite?.();
    },
    close() {
      sideGone(true, "the local app closed the connection");
      peer.flush?.();
      void peer.writer.close().catch(() => {});
    },
    abort(reason) {
      sideGone(true, `the local app aborted the connection: ${String(reason)}`);
      void peer.writer.abort(reason).catch(() => {});
    },
  });
  const attach = (options: CancellationOptions) => {
    if (cancellation !== undefined) throw new Error("acp-cancel: this stream already has an engine attached");
    cancellation = createCancellation(options, toLocal, (message) => peer.send(message));
    return cancellation;
  };
  return { readable, writable, [attachKey]: attach };
}

/**
 * Puts the cancellation engine between an SDK app and the stream it would have connected
 * to. Returns the stream to connect to instead, and a handle for scoping handlers. acp-cancel's
 * own `ndJsonStream` has the engine built in: it is attached, not wrapped; a second attach throws.
 */
export function cancellableStream(
  inner: MessageStream,
  options: CancellationOptions,
): { stream: MessageStream; cancellation: Cancellation } {
  const attachBuiltIn = (inner as Attachable)[attachKey];
  if (attachBuiltIn !== undefined) return { stream: inner, cancellation: attachBuiltIn(options) };
  // Any other object stream (the SDK's `ndJsonStream`, a WebSocket stream, …) is the peer's end.
  const wrapped = embeddedStream((fromPeer, writeFailed) => {
    const writer = inner.writable.getWriter();
    return {
      writer,
      reader: inner.readable.getReader(),
      send(message) {
        writer.write(message).catch(writeFailed);
      },
      received: fromPeer,
    };
  });
  return { stream: wrapped, cancellation: wrapped[attachKey](options) };
}
