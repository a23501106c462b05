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
   * What is known about the app in this process. Default `{ inProcess: true }`: an
   * `@agentclientprotocol/sdk` 2.x app, told to stop with a synthetic `$/cancel_request`. An
   * agent on an older SDK line (0.x, 1.x class API, zed 0.4) stops a turn only on
   * `session/cancel`: pass `{ cancelSupport: "no" }` and it is told in those words.
   */
  app?: PortOptions;
  /**
   * Follow a cancelled turn the engine answered for the agent (its grace passed) to the
   * agent's real end of it: the turn's late `session/update`s are dropped, its late requests
   * answered cancelled, and the session's next prompt waits for that end (at most
   * `windowMs`, default 10 s, then it is refused with -32010). Default for a client: on
   * (`{}`), so the app never sees an update of a turn it was told is over. Default for an
   * agent: off. `false` turns it off.
   */
  turnEnd?: TurnEndOptions | false;
}

/** The engine's `turnEnd` for an app of `role`: on for clients unless turned off (docs/decisions.md). */
function turnEndFor(role: Side, turnEnd: TurnEndOptions | false | undefined): TurnEndOptions | undefined {
  if (turnEnd === false) return undefined;
  return turnEnd ?? (role === "client" ? {} : undefined);
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
  const { role: _role, peer, app, turnEnd, ...engineOptions } = options;
  const followed = turnEndFor(local, turnEnd);
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
