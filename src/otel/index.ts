import { trace, type Tracer } from "@opentelemetry/api";
import { type AnyJob, jobObserver, setJobObserver } from "../core/index.js";
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

/**
 * A job's W3C trace context (`traceparent`, and `tracestate`/`baggage` when set) as a plain
 * record: for carriers acp-cancel does not write itself, such as an A2A message's `metadata`
 * (which `CancellableExecutor` reads) or headers of your own. Empty while not tracing.
 *
 * ```ts
 * await client.sendMessage({ message: { ...message, metadata: traceContext(jobOf(ctx)) } });
 * ```
 */
export function traceContext(job: AnyJob | undefined): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (job !== undefined) jobObserver?.inject(job, carrier);
  return carrier;
}
