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

// Span names and attributes after OpenTelemetry's semantic conventions (JSON-RPC, MCP, GenAI). The
// current and the earlier JSON-RPC names are both written (their `rpc/dup` mode): older backends still work.

type SpanAttributes = Record<string, string | number | boolean>;

/** Our own attributes and events, under one prefix. */
const ATTR = {
  protocol: "acp_cancel.protocol",
  cause: "acp_cancel.cancel.cause",
  origin: "acp_cancel.cancel.origin",
  state: "acp_cancel.state",
} as const;

/** The span's name: the method, then the tool for an MCP tool call (`tools/call search`). */
function spanName(info: JobInfo): string {
  const tool = info.attributes?.["gen_ai.tool.name"];
  return tool === undefined ? info.method : `${info.method} ${String(tool)}`;
}

const JSONRPC_SYSTEM = { "rpc.system.name": "jsonrpc", "rpc.system": "jsonrpc", "jsonrpc.protocol.version": "2.0" };

function spanAttributes({ protocol, method, id, attributes }: JobInfo): SpanAttributes {
  const ids = (...names: string[]) => Object.fromEntries(id === undefined ? [] : names.map((name) => [name, String(id)]));
  const own =
    protocol === "mcp"
      ? { "mcp.method.name": method, ...ids("jsonrpc.request.id") }
      : protocol === "acp" || protocol === "a2a" || protocol === "jsonrpc"
        ? { ...JSONRPC_SYSTEM, "rpc.method": method, ...ids("jsonrpc.request.id", "rpc.jsonrpc.request_id") }
        : { "rpc.method": method, ...ids(`${protocol}.request.id`) };
  return { [ATTR.protocol]: protocol, ...own, ...attributes };
}

/** The event names a span carries, one per thing that happens to a cancelled job. */
const SPAN_EVENTS = {
  "cancel": "cancel",
  "grace": "grace",
  "synthetic-answer": "synthetic answer",
  "late-reply-dropped": "late reply dropped",
} as const;

/**
 * Turns the job tree into spans, each under the nearest ancestor's span, else the carrier's context, else the active one.
 * A cancel, the grace, the synthetic answer and a late reply are events; the settled state is the status.
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
    const { cause } = job;
    const code = failure === undefined ? undefined : String(failure.code);
    if (code !== undefined) span.setAttributes({ "error.type": code, "rpc.response.status_code": code });
    if (cause !== undefined) {
      span.setAttributes({ [ATTR.state]: "cancelled", [ATTR.cause]: cause, "error.type": code ?? "cancelled" });
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
