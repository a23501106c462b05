import { CancelEngine } from "./engine.js";
import type { EngineOptions, PortOptions, TurnEndOptions } from "./engine-options.js";
import { runHandlerInScope } from "./handler-scope.js";
import { otherSide, type Side } from "./methods.js";

export interface CancellationOptions extends Omit<EngineOptions, "client" | "agent" | "turnEnd"> {
  /** The role of the app in this process. */
  role: Side;
  /** What is known about the peer; by default decided at `initialize`. */
  peer?: PortOptions;
  /**
   * What is known about the app in this process. Default `{ inProcess: true }` (an SDK 2.x app);
   * an agent on an older SDK line stops only on `session/cancel`: pass `{ cancelSupport: "no" }`.
   */
  app?: PortOptions;
  /**
   * Follow a turn the engine answered for the agent to its real end: late updates dropped, late
   * requests refused, the next prompt held (at most `windowMs`, then -32010). Default: on (`{}`)
   * for a client, off for an agent; `false` turns it off.
   */
  turnEnd?: TurnEndOptions | false;
}

/** One embedded connection's engine, and the way to scope that connection's handlers. */
export interface Cancellation {
  readonly engine: CancelEngine;
  readonly role: Side;
  /** Wraps a handler: requests it sends through its context nest under its own, its aborts answer -32800. */
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
  const { role: _role, peer, app, turnEnd, ...engineOptions } = options;
  // On for clients unless turned off (docs/decisions.md, "Late updates of a cancelled turn, embedded").
  const followed = turnEnd === false ? undefined : (turnEnd ?? (local === "client" ? {} : undefined));
  const engine = new CancelEngine(
    (side, message) => (side === local ? delivery.toLocal(message) : delivery.toRemote(message)),
    {
      ...engineOptions,
      ...(followed === undefined ? {} : { turnEnd: followed }),
      [local]: app ?? { inProcess: true },
      [remote]: peer ?? {},
    },
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
