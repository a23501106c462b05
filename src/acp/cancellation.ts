import { CancelEngine } from "./engine.js";
import type { EngineOptions, PortOptions } from "./engine-options.js";
import { runHandlerInScope } from "./handler-scope.js";
import { otherSide, type Side } from "./methods.js";

export interface CancellationOptions extends Omit<EngineOptions, "client" | "agent"> {
  /** The role of the app in this process. */
  role: Side;
  /** What is known about the peer; by default decided at `initialize`. */
  peer?: PortOptions;
  /**
   * What is known about the app in this process. Default `{ inProcess: true }`: an
   * `@agentclientprotocol/sdk` 2.x app, told to stop with a synthetic `$/cancel_request`. An
   * agent on an older SDK line (0.x, 1.x class API, zed 0.4) stops a turn only on
   * `session/cancel`: pass `{ cancelSupport: "no" }` and it is told in those words.
   */
  app?: PortOptions;
}

/** One embedded connection's engine, and the way to scope that connection's handlers. */
export interface Cancellation {
  readonly engine: CancelEngine;
  readonly role: Side;
  /**
   * Wraps a request handler so that requests it makes through its context are nested under
   * the request it handles, and so that its own aborts are answered as cancellations (-32800).
   */
  scope<H extends (context: never) => unknown>(handler: H): H;
}

/** Where the embedded engine delivers: to the app in this process, or to the peer. */
export interface EmbeddedDelivery {
  toLocal(message: unknown): void;
  toRemote(message: unknown): void;
}

/** The engine for an app in this process: the local side is the in-process SDK app. */
export function createCancellation(options: CancellationOptions, delivery: EmbeddedDelivery): Cancellation {
  const local = options.role;
  const remote = otherSide(local);
  const { role: _role, peer, app, ...engineOptions } = options;
  const engine = new CancelEngine(
    (side, message) => (side === local ? delivery.toLocal(message) : delivery.toRemote(message)),
    { ...engineOptions, [local]: app ?? { inProcess: true }, [remote]: peer ?? {} },
  );
  return {
    engine,
    role: local,
    scope(handler) {
      const call = handler as unknown as (context: unknown) => unknown;
      return ((context: unknown) => runHandlerInScope(engine, remote, call, context)) as unknown as typeof handler;
    },
  };
}
