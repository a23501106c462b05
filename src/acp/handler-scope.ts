import { bindHandlerJob } from "../core/index.js";
import type { CancelEngine } from "./engine.js";
import type { Side } from "./methods.js";

/** Aborts thrown by the handler's own machinery (AbortController, AbortSignal.timeout). */
export function isAbortLike(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "AbortError" || name === "TimeoutError" || code === "ABORT_ERR";
}

export function isTimeoutLike(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "TimeoutError";
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

/**
 * Makes the peer context a handler receives mark the requests it sends as nested under the
 * request being handled. The SDK hands `params` to the wire by identity, so the mark is a
 * WeakMap entry the engine reads when the request passes: no AsyncLocalStorage, whose
 * promise hooks would tax every promise in the process. The SDK builds a fresh context per
 * request, so the override is an own property of that object (one cached shape transition;
 * a per-request prototype would defeat V8's inline caches).
 */
function markNestedRequests(engine: CancelEngine, peer: PeerContext, job: object): void {
  const request = peer.request;
  peer.request = function (this: PeerContext, method, params, options) {
    if (typeof params === "object" && params !== null) engine.nestUnder(params, job as never);
    return request.call(this, method, params, options);
  };
}

/**
 * Runs a request handler as part of its request's job: requests it sends through its
 * context nest under that request, `jobOf(ctx)` returns that job (for other bindings' calls),
 * and an abort of its own is answered as a cancellation (-32800), not -32603.
 */
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
  return (async () => {
    try {
      return await handler(context);
    } catch (error) {
      if (isAbortLike(error) && job.isRunning) {
        engine.cancel(remote, job.payload.id, isTimeoutLike(error) ? "deadline" : "internal");
      }
      throw error;
    }
  })();
}
