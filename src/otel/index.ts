import { trace, type Tracer } from "@opentelemetry/api";
import { setJobObserver } from "../core/index.js";
import { SpanObserver } from "./span-observer.js";

export { ATTR, spanAttributes, spanName } from "./attributes.js";
export { SPAN_EVENTS, SpanObserver } from "./span-observer.js";

/** The instrumentation scope our spans are reported under. */
export const TRACER_NAME = "acp-cancel";

export interface TraceJobsOptions {
  /** Default: the global tracer provider's tracer named {@link TRACER_NAME}. */
  readonly tracer?: Tracer;
}

/**
 * Makes every job a binding starts a span, from now on, in this process. Returns a function
 * that stops it. Without an SDK registered the global tracer is a no-op: nothing is recorded.
 *
 * ```ts
 * import { traceJobs } from "acp-cancel/otel";
 * const stop = traceJobs();
 * ```
 */
export function traceJobs(options: TraceJobsOptions = {}): () => void {
  const observer = new SpanObserver(options.tracer ?? trace.getTracer(TRACER_NAME));
  const previous = setJobObserver(observer);
  return () => {
    setJobObserver(previous);
  };
}
