import { bindHandlerJob } from "../core/index.js";
import { isThenable } from "../core/is-thenable.js";
import { CancelEngine } from "./engine.js";
import type { EngineOptions, PortOptions, TurnEndOptions } from "./engine-options.js";
import { otherSide, type Side } from "./methods.js";
import type { RequestJob } from "./engine-jobs.js";

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

/** The engine for an app in this process (the local side), delivering to it and to its peer. */
export function createCancellation(
  options: CancellationOptions,
  toLocal: (message: unknown) => void,
  toRemote: (message: unknown) => void,
): Cancellation {
  const { role: local, peer, app, turnEnd, ...engineOptions } = options;
  const remote = otherSide(local);
  // On for clients unless turned off (docs/decisions.md, "Late updates of a cancelled turn, embedded").
  const followed = turnEnd === false ? undefined : (turnEnd ?? (local === "client" ? {} : undefined));
  const engine = new CancelEngine(
    (side, message) => (side === local ? toLocal(message) : toRemote(message)),
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
      return ((context: unknown) => runHandlerInScope(engine, remote, handler as never, context)) as unknown as typeof handler;
    },
  };
}

/** The SDK's per-request handler context, as far as this library touches it. */
interface HandlerContext {
  requestId?: unknown;
  /** The SDK's per-request signal: the key `jobOf(ctx)` finds the job by. */
  signal?: unknown;
  client?: PeerContext;
  agent?: PeerContext;
}
type PeerContext = { request(method: string, params?: unknown, options?: unknown): unknown };

/** Makes the handler's peer context mark the params of requests it sends (read by identity, no AsyncLocalStorage). */
function markNestedRequests(engine: CancelEngine, peer: PeerContext, job: RequestJob): void {
  const send = peer.request;
  peer.request = function (this: PeerContext, method: string, params?: unknown, options?: unknown): unknown {
    if (typeof params === "object" && params !== null) engine.nestUnder(params, job);
    return send.call(this, method, params, options);
  };
}

/** Runs a handler in its request's job: its requests nest under it, `jobOf(ctx)` finds it, its own abort answers -32800. */
export function runHandlerInScope(
  engine: CancelEngine,
  remote: Side,
  handler: (context: unknown) => unknown,
  context: unknown,
): unknown {
  const ctx = context as HandlerContext | undefined;
  const id = ctx?.requestId;
  const job = id === undefined ? undefined : engine.job(remote, id as never);
  if (job === undefined || ctx === undefined) return handler(context);
  if (ctx.signal instanceof AbortSignal) bindHandlerJob(ctx.signal, job);
  if (ctx.client !== undefined) markNestedRequests(engine, ctx.client, job);
  if (ctx.agent !== undefined) markNestedRequests(engine, ctx.agent, job);
  let result: unknown;
  try {
    result = handler(context);
  } catch (error) {
    result = Promise.reject(error);
  }
  if (!isThenable(result)) return Promise.resolve(result);
  return result.then(undefined, (error: unknown) => {
    // The handler's own abort (its AbortController, AbortSignal.timeout) cancels its job.
    const { name, code } = (typeof error === "object" && error !== null ? error : {}) as { name?: unknown; code?: unknown };
    if (job.isRunning && (name === "AbortError" || name === "TimeoutError" || code === "ABORT_ERR")) {
      engine.cancel(remote, job.payload.id, name === "TimeoutError" ? "deadline" : "internal");
    }
    throw error;
  });
}
