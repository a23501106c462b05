import { AsyncLocalStorage } from "node:async_hooks";
import type { CancelEngine } from "./engine.js";
import type { Side } from "./methods.js";
import type { RequestJob } from "./request-record.js";

/** Which connection's engine, and which request's handler, the current code runs for. */
export interface ScopeFrame {
  readonly engine: CancelEngine;
  /** The side whose requests this process handles. */
  readonly remote: Side;
  readonly job: RequestJob | undefined;
}

/**
 * One AsyncLocalStorage for the whole library. The SDK dispatches handlers from the
 * receive loop started by `connect`, so a frame set around `connect` names the engine for
 * every handler of that connection; a frame set around a handler names its request.
 */
export const handlerScope = new AsyncLocalStorage<ScopeFrame>();

/** The job whose handler is running now, if it belongs to `engine`. */
export function currentJobFor(engine: CancelEngine): RequestJob | undefined {
  const frame = handlerScope.getStore();
  return frame?.engine === engine ? frame.job : undefined;
}

/** Aborts thrown by the handler's own machinery (AbortController, AbortSignal.timeout). */
export function isAbortLike(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "AbortError" || name === "TimeoutError" || code === "ABORT_ERR";
}

export function isTimeoutLike(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "TimeoutError";
}

/**
 * Runs a request handler inside its request's frame: requests it makes nest under that
 * request, and an abort of its own is answered as a cancellation (-32800), not -32603.
 */
export function runHandlerInScope(
  engine: CancelEngine,
  remote: Side,
  handler: (context: unknown) => unknown,
  context: unknown,
): unknown {
  const id = (context as { requestId?: unknown } | undefined)?.requestId;
  const job = id === undefined ? undefined : engine.job(remote, id as never);
  if (job === undefined) return handler(context);
  return handlerScope.run({ engine, remote, job }, async () => {
    try {
      return await handler(context);
    } catch (error) {
      if (isAbortLike(error) && job.isRunning) {
        engine.cancel(remote, job.payload.id, isTimeoutLike(error) ? "deadline" : "internal");
      }
      throw error;
    }
  });
}
