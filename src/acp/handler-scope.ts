import { bindHandlerJob } from "../core/index.js";
import { isThenable } from "../core/is-thenable.js";
import type { CancelEngine } from "./engine.js";
import type { Side } from "./methods.js";
import type { RequestJob } from "./request-record.js";

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

const ENGINE = Symbol("acp-cancel engine");
const JOB = Symbol("acp-cancel job");
const SDK_REQUEST = Symbol("acp-cancel sdk request");
type MarkedPeer = PeerContext & { [ENGINE]: CancelEngine; [JOB]: object; [SDK_REQUEST]: PeerContext["request"] };

/** The `request` of a handler's peer context: marks the params, then sends as the SDK would. */
function nestedRequest(this: MarkedPeer, method: string, params?: unknown, options?: unknown): unknown {
  if (typeof params === "object" && params !== null) this[ENGINE].nestUnder(params, this[JOB] as never);
  return this[SDK_REQUEST].call(this, method, params, options);
}

/**
 * Makes the peer context a handler receives mark the requests it sends as nested under the
 * request being handled. The SDK hands `params` to the wire by identity, so the mark is a
 * WeakMap entry the engine reads when the request passes: no AsyncLocalStorage, whose
 * promise hooks would tax every promise in the process. The SDK builds a fresh context per
 * request, so the override is own properties of that object, always added in the same order
 * (one cached shape transition; a per-request prototype would defeat V8's inline caches),
 * and one shared function instead of a closure per request.
 */
function markNestedRequests(engine: CancelEngine, peer: PeerContext, job: object): void {
  const marked = peer as MarkedPeer;
  marked[ENGINE] = engine;
  marked[JOB] = job;
  marked[SDK_REQUEST] = peer.request;
  marked.request = nestedRequest;
}

/**
 * Runs a request handler as part of its request's job: requests it sends through its
 * context nest under that request, `jobOf(ctx)` returns that job (for other bindings' calls),
 * and an abort of its own is answered as a cancellation (-32800), not -32603.
 *
 * A handler's (native) promise goes back to the SDK as it is, watched by one reaction
 * registered before the SDK's own, so it runs first: no promise in between, so the SDK's
 * answer leaves one microtask sooner, and an error is not thrown a second time. Any other
 * thenable passes through one `then`, so that its `then` is called once, as the SDK would.
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
  const failed = (error: unknown): void => cancelOnOwnAbort(engine, remote, job, error);
  let result: unknown;
  try {
    result = handler(context);
  } catch (error) {
    failed(error);
    return Promise.reject(error);
  }
  if (result instanceof Promise && result.constructor === Promise) {
    result.then(undefined, failed);
    return result;
  }
  if (!isThenable(result)) return Promise.resolve(result);
  return result.then(undefined, (error: unknown) => {
    failed(error);
    throw error;
  });
}

/** A handler's own abort (its AbortController, AbortSignal.timeout) cancels its job. */
function cancelOnOwnAbort(engine: CancelEngine, remote: Side, job: RequestJob, error: unknown): void {
  if (isAbortLike(error) && job.isRunning) {
    engine.cancel(remote, job.payload.id, isTimeoutLike(error) ? "deadline" : "internal");
  }
}
