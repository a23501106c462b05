import { type AnyJob, jobObserver } from "../core/index.js";

/**
 * ABP's part of tracing (acp-cancel/otel): the W3C trace context a call carries to the app, in
 * its `options._meta` (docs/decisions.md, "ABP: the trace context of a call"). The same place
 * serves every transport: the `capabilities/call` envelope's payload and the options argument
 * of `window.abp.call` that Playwright evaluates.
 */

/** The call's `traceparent` (and `tracestate`, `baggage`); undefined while nothing traces. */
export function traceMeta(job: AnyJob): Record<string, string> | undefined {
  if (jobObserver === undefined) return undefined;
  const meta: Record<string, unknown> = {};
  jobObserver.inject(job, meta);
  // Without a propagator (no SDK registered) nothing is written: the call leaves untouched.
  for (const _ in meta) return meta as Record<string, string>;
  return undefined;
}
