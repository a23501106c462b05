import { CancelEngine } from "./engine.js";
import type { EngineOptions, PortOptions } from "./engine-options.js";
import { currentJobFor, handlerScope, runHandlerInScope } from "./handler-scope.js";
import { otherSide, type Side } from "./methods.js";
import type { MessageStream } from "./sdk-stream.js";

export interface CancellableStreamOptions extends Omit<EngineOptions, "scope" | "client" | "agent"> {
  /** The role of the app in this process. */
  role: Side;
  /** What is known about the peer; by default decided at `initialize`. */
  peer?: PortOptions;
}

export interface Cancellation {
  readonly engine: CancelEngine;
  readonly role: Side;
  /**
   * Wraps a request handler so that requests it makes are nested under the request it
   * handles, and so that its own aborts are answered as cancellations (-32800).
   */
  scope<H extends (context: never) => unknown>(handler: H): H;
  /** Runs `fn` with this connection as the ambient one (handlers dispatched inside inherit it). */
  run<T>(fn: () => T): T;
}

/**
 * Puts the cancellation engine between an SDK app and the stream it would have connected
 * to. Returns the stream to connect to instead, and a handle for scoping handlers.
 */
export function cancellableStream(
  inner: MessageStream,
  options: CancellableStreamOptions,
): { stream: MessageStream; cancellation: Cancellation } {
  const local = options.role;
  const remote = otherSide(local);
  let toLocal!: ReadableStreamDefaultController<unknown>;
  let localOpen = true;
  const writer = inner.writable.getWriter();
  const { role: _role, peer, ...engineOptions } = options;
  const engine: CancelEngine = new CancelEngine(
    (side, message) => {
      if (side === local) {
        if (localOpen) toLocal.enqueue(message);
        return;
      }
      writer
        .write(message)
        .catch((error: unknown) => engine.close(remote, `write to peer failed: ${String(error)}`));
    },
    {
      ...engineOptions,
      [local]: { inProcess: true },
      [remote]: peer ?? {},
      scope: () => currentJobFor(engine),
    },
  );
  const closeLocalReadable = () => {
    if (!localOpen) return;
    localOpen = false;
    toLocal.close();
  };
  const reader = inner.readable.getReader();
  const readable = new ReadableStream<unknown>({
    start(controller) {
      toLocal = controller;
    },
    cancel(reason) {
      localOpen = false;
      engine.close(local, "the local app stopped reading");
      void reader.cancel(reason).catch(() => {});
      // The app closed its connection: the peer's input ends too (it sees EOF, not silence).
      void writer.close().catch(() => {});
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
  // The pump runs outside any handler frame: messages from the peer have no local parent.
  handlerScope.exit(() => void pump());
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
      closeLocalReadable();
    }
  }

  const cancellation: Cancellation = {
    engine,
    role: local,
    scope(handler) {
      const call = handler as unknown as (context: unknown) => unknown;
      return ((context: unknown) =>
        runHandlerInScope(engine, remote, call, context)) as unknown as typeof handler;
    },
    run(fn) {
      return handlerScope.run({ engine, remote, job: undefined }, fn);
    },
  };
  return { stream: { readable, writable }, cancellation };
}
