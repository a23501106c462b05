/**
 * Reading exported spans back: whether they are one connected trace, the trace drawn as a tree
 * (span, service, status, cancel events with their cause and origin), and the same spans as a
 * file `acp-cancel trace` renders (a timeline, or a sequence diagram with `--mermaid`).
 */
import { type ReceivedSpan, SPAN_KIND, STATUS_ERROR } from "./otlp-receiver.js";

export interface TraceShape {
  traceIds: string[];
  /** Spans whose parent is not among the spans (one, the root, in a connected trace). */
  roots: ReceivedSpan[];
  /** What keeps the spans from being one connected trace; empty when they are. */
  problems: string[];
}

const KIND_NAMES: Record<number, string> = { [SPAN_KIND.internal]: "INTERNAL", [SPAN_KIND.server]: "SERVER", [SPAN_KIND.client]: "CLIENT" };
const kindOf = (span: ReceivedSpan) => KIND_NAMES[span.kind] ?? `KIND ${span.kind}`;

/** One trace id, one root, and every other span's parent among the spans. */
export function traceShape(spans: readonly ReceivedSpan[]): TraceShape {
  const traceIds = [...new Set(spans.map((s) => s.traceId))];
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId));
  const problems: string[] = [];
  if (spans.length === 0) problems.push("no spans were exported");
  if (traceIds.length > 1) problems.push(`${traceIds.length} trace ids: ${traceIds.join(", ")}`);
  if (roots.length > 1) {
    problems.push(`${roots.length} spans without a parent among the spans: ${roots.map((s) => `${s.name} (${s.service})`).join(", ")}`);
  }
  return { traceIds, roots, problems };
}

/** The children of each span, in start order. */
function childrenOf(spans: readonly ReceivedSpan[]): Map<string | undefined, ReceivedSpan[]> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | undefined, ReceivedSpan[]>();
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    const parent = span.parentSpanId !== undefined && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  return children;
}

const cancelText = (attributes: Record<string, unknown>) =>
  `cause=${String(attributes["acp_cancel.cancel.cause"] ?? "?")} origin=${String(attributes["acp_cancel.cancel.origin"] ?? "?")}`;

/**
 * The trace as a tree, one line per span and per event, times in ms since the root started:
 *
 *   session/prompt  [CLIENT] editor  0.0..412.3 ms  ERROR cancelled (session)
 *   └─ session/prompt  [SERVER] acp-agent  ...
 *      • 105.2 ms cancel cause=session origin=self
 */
export function renderSpanTree(spans: readonly ReceivedSpan[]): string[] {
  const children = childrenOf(spans);
  const t0 = Math.min(...spans.map((s) => s.start));
  const t = (at: number) => (at - t0).toFixed(1);
  const lines: string[] = [];
  const walk = (span: ReceivedSpan, lead: string, tail: string) => {
    const status = span.status.code === STATUS_ERROR ? `ERROR ${span.status.message ?? ""}`.trim() : "UNSET";
    lines.push(`${lead}${span.name}  [${kindOf(span)}] ${span.service}  ${t(span.start)}..${t(span.end)} ms  ${status}`);
    const below = children.get(span.spanId) ?? [];
    const bar = below.length > 0 ? "│ " : "  ";
    for (const event of span.events) {
      const detail = event.name === "cancel" ? ` ${cancelText(event.attributes)}` : "";
      lines.push(`${tail}${bar} • ${t(event.at)} ms ${event.name}${detail}`);
    }
    below.forEach((child, index) => {
      const last = index === below.length - 1;
      walk(child, `${tail}${last ? "└─ " : "├─ "}`, `${tail}${last ? "   " : "│  "}`);
    });
  };
  for (const root of children.get(undefined) ?? []) walk(root, "", "");
  return lines;
}

/**
 * The spans as an `acp-cancel trace` file: a span whose parent is in another service is a hop
 * between the two services, one in the same service a note; each cancel event and each span's
 * end is a note of its service.
 */
export function spansAsTrace(spans: readonly ReceivedSpan[]): string {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const t0 = Math.min(...spans.map((s) => s.start));
  const entries: { t: number; line: Record<string, unknown> }[] = [];
  const party = (service: string) => service.replace(/[^\w.-]/g, "-");
  for (const span of spans) {
    const protocol = String(span.attributes["acp_cancel.protocol"] ?? "otel").toUpperCase();
    const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    const label = `${span.name} [${kindOf(span)}]`;
    const at = (ms: number) => Math.round((ms - t0) * 1000) / 1000;
    entries.push({
      t: at(span.start),
      line: parent !== undefined && parent.service !== span.service
        ? { hop: `${party(parent.service)}->${party(span.service)}`, label, protocol }
        : { note: `${label} started`, party: party(span.service), protocol },
    });
    for (const event of span.events.filter((e) => e.name === "cancel")) {
      entries.push({ t: at(event.at), line: { note: `${span.name}: cancel ${cancelText(event.attributes)}`, party: party(span.service), protocol } });
    }
    const status = span.status.code === STATUS_ERROR ? (span.status.message ?? "ERROR") : "ok";
    entries.push({ t: at(span.end), line: { note: `${span.name} ended: ${status}`, party: party(span.service), protocol } });
  }
  return entries
    .sort((a, b) => a.t - b.t)
    .map((entry) => JSON.stringify({ t: entry.t, ...entry.line }))
    .join("\n")
    .concat("\n");
}
