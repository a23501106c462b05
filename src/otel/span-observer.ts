import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import type { AnyJob, CancelReason, JobCancelOrigin, JobEvent, JobFailure, JobInfo, JobObserver } from "../core/index.js";
import { ATTR, spanAttributes, spanName } from "./attributes.js";

/** The event names a span carries, one per thing that happens to a cancelled job. */
export const SPAN_EVENTS = {
  "cancel": "cancel",
  "grace": "grace",
  "synthetic-answer": "synthetic answer",
  "late-reply-dropped": "late reply dropped",
} as const;

/**
 * Turns the job tree into spans: one per job a binding starts, its parent the nearest
 * ancestor job's span, else the sender's context (from the carrier), else the active one.
 * A cancel is an event with its cause and origin; so are the grace, the synthetic answer and
 * a late reply dropped; the settled state is the status.
 */
export class SpanObserver implements JobObserver {
  private readonly spans = new WeakMap<AnyJob, Span>();
  /** The tracer of a span that `route` chose, for its late events. */
  private readonly routed = new WeakMap<Span, Tracer>();

  /** `tracer` is asked per job (undefined while no SDK is registered: no no-op span); `route` picks first. */
  constructor(
    private readonly tracer: () => Tracer | undefined,
    private readonly route?: (info: JobInfo) => Tracer | undefined,
  ) {}

  onStart(job: AnyJob, info: JobInfo): void {
    const chosen = this.route?.(info);
    const tracer = chosen ?? this.tracer();
    if (tracer === undefined) return;
    const parent = this.nearestSpan(job.parent);
    let at: Context;
    if (parent !== undefined) at = trace.setSpan(ROOT_CONTEXT, parent);
    else if (info.carrier !== undefined) at = propagation.extract(context.active(), info.carrier);
    else at = context.active();
    const kind = info.kind === "server" ? SpanKind.SERVER : SpanKind.CLIENT;
    const span = tracer.startSpan(spanName(info), { kind, attributes: spanAttributes(info) }, at);
    this.spans.set(job, span);
    if (chosen !== undefined) this.routed.set(span, chosen);
  }

  onCancel(job: AnyJob, cause: CancelReason, origin: JobCancelOrigin): void {
    this.spans.get(job)?.addEvent(SPAN_EVENTS.cancel, { [ATTR.cause]: cause, [ATTR.origin]: origin });
  }

  onEvent(job: AnyJob, event: JobEvent): void {
    const span = this.spans.get(job);
    if (span === undefined) return;
    const name = SPAN_EVENTS[event];
    if (span.isRecording()) {
      span.addEvent(name);
      return;
    }
    // An ended span takes no events: a late reply becomes a moment-long child span.
    const attributes = { [ATTR.cause]: job.cause ?? "internal" };
    const tracer = this.routed.get(span) ?? this.tracer();
    tracer?.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, trace.setSpan(ROOT_CONTEXT, span)).end();
  }

  onSettle(job: AnyJob, failure: JobFailure | undefined): void {
    const span = this.spans.get(job);
    if (span === undefined) return;
    const cause = job.cause;
    if (failure !== undefined) {
      span.setAttribute("error.type", String(failure.code));
      span.setAttribute("rpc.response.status_code", String(failure.code));
    }
    if (cause !== undefined) {
      span.setAttribute(ATTR.state, "cancelled");
      span.setAttribute(ATTR.cause, cause);
      if (failure === undefined) span.setAttribute("error.type", "cancelled");
      span.setStatus({ code: SpanStatusCode.ERROR, message: `cancelled (${cause})` });
    } else if (failure !== undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message ?? String(failure.code) });
    }
    span.end();
  }

  inject(job: AnyJob, carrier: Record<string, unknown>): void {
    const span = this.nearestSpan(job);
    if (span === undefined && this.tracer() === undefined) return;
    propagation.inject(span === undefined ? context.active() : trace.setSpan(context.active(), span), carrier);
  }

  private nearestSpan(job: AnyJob | undefined): Span | undefined {
    for (let at = job; at !== undefined; at = at.parent) {
      const span = this.spans.get(at);
      if (span !== undefined) return span;
    }
    return undefined;
  }
}
