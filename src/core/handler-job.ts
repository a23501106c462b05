import type { AnyJob } from "./job.js";

/** Each running handler's job, by the per-request signal every SDK we bind hands its handlers. */
const jobsBySignal = new WeakMap<AbortSignal, AnyJob>();

/** Records that the handler holding `signal` runs for `job` (called by a binding's handler scope). */
export function bindHandlerJob(signal: AbortSignal, job: AnyJob): void {
  jobsBySignal.set(signal, job);
}

/**
 * The job of the request a handler is handling (from its context or its signal), to pass on as
 * `parent` to another binding's call: `mcp.callTool(params, { parent: jobOf(ctx) })`. Undefined
 * outside a handler that acp-cancel scopes.
 */
export function jobOf(context: { readonly signal?: AbortSignal | undefined } | AbortSignal | undefined): AnyJob | undefined {
  if (context === undefined) return undefined;
  const signal = context instanceof AbortSignal ? context : context.signal;
  return signal === undefined ? undefined : jobsBySignal.get(signal);
}
