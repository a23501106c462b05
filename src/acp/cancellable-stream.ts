import { type Cancellation, type CancellationOptions, createCancellation } from "./cancellation.js";
import { otherSide } from "./methods.js";
import type { MessageStream } from "./sdk-stream.js";

/**
 * Puts the cancellation engine between an SDK app and the stream it would have connected
 * to. Returns the stream to connect to instead, and a handle for scoping handlers.
 */
export function cancellableStream(
  inner: MessageStream,
  options: CancellationOptions,
): { stream: MessageStream; cancellation: Cancellation } {
  const local = options.role;
  const remote = otherSide(local);
  let localOpen = true;
  const writer = inner.writable.getWriter();
  // One handler for every write's failure (no closure per message).
  const writeFailed = (error: unknown) => engine.close(remote, `write to peer failed: ${String(error)}`);
  const cancellation = createCancellation(options, {
    toLocal(message) {
      if (localOpen) toLocal.enqueue(message);
    },
    toRemote(message) {
      writer.write(message).catch(writeFailed);
    },
  });
  const { engine } = cancellation;
  const reader = inner.readable.getReader();
  let toLocal!: ReadableStreamDefaultController<unknown>;
  const readable = new ReadableStream<unknown>({
    start(controller) {
      toLocal = controller;
    },
    cancel(reason) {
      localOpen = false;
      engine.close(local, "the local app stopped reading");
      void reader.cancel(reason).catch(() => {});
    },
  });
  const writable = new WritableStream<unknown>({
    write(message) {
      engine.receive(local, message);
    },
    close() {
      engine.close(local, "the local app closed the connection");
      void writer.close().catch(() => {});
    },
    abort(reason) {
      engine.close(local, `the local app aborted the connection: ${String(reason)}`);
      void writer.abort(reason).catch(() => {});
    },
  });
  void pump();
  async function pump(): Promise<void> {
    let detail = "the peer closed the connection";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        engine.receive(remote, value);
      }
    } catch (error) {
      detail = `the connection to the peer failed: ${String(error)}`;
    } finally {
      engine.close(remote, detail);
      if (localOpen) {
        localOpen = false;
        toLocal.close();
      }
    }
  }

  return { stream: { readable, writable }, cancellation };
}
