import { diag, ProxyTracerProvider, trace, type Tracer } from "@opentelemetry/api";
import { type AnyJob, setJobObserver, traceCarrier } from "../core/index.js";
import { SpanObserver } from "./span-observer.js";

/** The instrumentation scope our spans are reported under. */
export const TRACER_NAME = "acp-cancel";

export interface TraceJobsOptions {
  /** Default: the global tracer provider's tracer named {@link TRACER_NAME}. */
  readonly tracer?: Tracer;
  /** The tracer for a job by protocol and kind, for a process hosting several services (resources); undefined: `tracer`. */
  readonly tracerFor?: (job: { readonly protocol: string; readonly kind: "client" | "server" }) => Tracer | undefined;
}

/**
 * Makes every job a binding starts a span, from now on, in this process; returns a function that
 * stops it. Call it after registering an SDK: without one (and without `tracer`) it installs nothing.
 */
export function traceJobs(options: TraceJobsOptions = {}): () => void {
  const { tracer, tracerFor } = options;
  const current = tracer === undefined ? registeredTracer : () => tracer;
  if (current() === undefined && tracerFor === undefined) {
    diag.warn("acp-cancel: no OpenTelemetry SDK is registered; call traceJobs() after registering one");
    return () => {};
  }
  const previous = setJobObserver(new SpanObserver(current, tracerFor));
  return () => void setJobObserver(previous);
}

/**
 * A job's W3C trace context as a plain record, for carriers acp-cancel does not write itself: an A2A
 * message's `metadata` (which `CancellableExecutor` reads), your own headers. Empty while not tracing.
 */
export function traceContext(job: AnyJob | undefined): Record<string, string> {
  return (job === undefined ? undefined : traceCarrier(job)) ?? {};
}

/** The registered SDK's tracer, asked per job: undefined until an SDK registers (or after `trace.disable()`). */
function registeredTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider ? provider.getDelegateTracer(TRACER_NAME) : provider.getTracer(TRACER_NAME);
}
