import type { AnyJob } from "./job.js";

/** Each running handler's job, by the per-request signal every SDK we bind hands its handlers. */
const jobsBySignal = new WeakMap<AbortSignal, AnyJob>();

/** Records that the handler holding `signal` runs for `job` (called by a binding's handler scope). */
export function bindHandlerJob(signal: AbortSignal, job: AnyJob): void {
  jobsBySignal.set(signal, job);
}

/**
 * The job of the request a handler is handling, for passing on as `parent` to another
 * binding's call, so that a cancel reaches that call and the request waits for it:
 *
 *     .onRequest(acp.methods.agent.session.prompt, async (ctx) => {
 *       await mcp.callTool({ name: "search", arguments: {} }, { parent: jobOf(ctx) });
 *     })
 *
 * Takes the handler's context (anything carrying its request's signal) or the signal. Undefined
 * outside a handler that acp-cancel scopes; pass `ctx.signal` as `signal` to plain libraries instead.
 */
export function jobOf(context: { readonly signal?: AbortSignal | undefined } | AbortSignal | undefined): AnyJob | undefined {
  if (context === undefined) return undefined;
  const signal = context instanceof AbortSignal ? context : context.signal;
  return signal === undefined ? undefined : jobsBySignal.get(signal);
}
