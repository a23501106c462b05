/**
 * What one Stop through the demo must leave in the exported spans: one connected trace, a span
 * for every hop with the previous hop's span as its parent, and on each a cancel event naming
 * its cause and origin. Used by `npm run demo:cross` for its exit code and by the cross test.
 */
import { type ReceivedSpan, SPAN_KIND } from "../otel/otlp-receiver.js";
import { traceShape } from "../otel/span-tree.js";

export interface Hop {
  service: string;
  name: string;
  kind: number;
  /** The hop whose span is this one's parent (an index into the hops), or undefined for the root. */
  parent: number | undefined;
  /** The cancel event's cause and origin; undefined for the editor, which sends the Stop. */
  cancel?: { cause: string; origin: string };
}

const { client: CLIENT, server: SERVER } = SPAN_KIND;
const session = { cause: "session", origin: "self" };
const cascade = { cause: "session", origin: "parent" };
/** Past a protocol boundary the cancel arrives as that protocol's own cancel. */
const arrived = { cause: "external", origin: "self" };

/** The hops, parents first. */
export function crossHops(withAbp: boolean): Hop[] {
  const hops: Hop[] = [
    { service: "editor", name: "session/prompt", kind: CLIENT, parent: undefined },
    { service: "acp-agent", name: "session/prompt", kind: SERVER, parent: 0, cancel: session },
    { service: "acp-agent", name: "tools/call search", kind: CLIENT, parent: 1, cancel: cascade },
    // `search` is an MCP task: its work is a span of its own (`tools/call`, with `mcp.task.id`), cancelled by
    // `tasks/cancel`. The `tools/call search` request was answered with the task before the Stop: no cancel.
    { service: "mcp-server", name: "tools/call", kind: SERVER, parent: 2, cancel: arrived },
    { service: "acp-agent", name: "tool_call", kind: CLIENT, parent: 1, cancel: cascade },
    { service: "rap-tool-server", name: "tool_call", kind: SERVER, parent: 4, cancel: arrived },
    { service: "acp-agent", name: "task", kind: CLIENT, parent: 1, cancel: cascade },
    // The task is created by the message, which carries the turn's context (the link comes after).
    { service: "a2a-agent", name: "task", kind: SERVER, parent: 1, cancel: arrived },
  ];
  if (withAbp) {
    hops.push(
      { service: "acp-agent", name: "render", kind: CLIENT, parent: 1, cancel: cascade },
      { service: "abp-app", name: "render", kind: SERVER, parent: 8, cancel: arrived },
    );
  }
  return hops;
}

export interface CrossTraceCheck {
  /** The spans of the turn's trace. */
  spans: ReceivedSpan[];
  /** The span found for each hop of {@link crossHops}, in the same order. */
  found: (ReceivedSpan | undefined)[];
  /** Everything that is not as it should be; empty for one connected trace with every hop. */
  problems: string[];
}

/**
 * Checks the spans of the turn's trace (`traceId`, the editor's). The other spans, of requests
 * before the turn (`initialize`, `session/new`), are traces of their own.
 */
export function checkCrossTrace(all: readonly ReceivedSpan[], withAbp: boolean, traceId: string | undefined): CrossTraceCheck {
  const hops = crossHops(withAbp);
  const spans = all.filter((s) => s.traceId === traceId);
  const problems = [...traceShape(spans).problems];
  const found = hops.map((hop) => spans.find((s) => s.service === hop.service && s.name === hop.name && s.kind === hop.kind));
  hops.forEach((hop, index) => {
    const span = found[index];
    const where = `${hop.service}: ${hop.name}`;
    if (span === undefined) return void problems.push(`${where}: no span`);
    const parent = hop.parent === undefined ? undefined : found[hop.parent];
    if (hop.parent !== undefined && (parent === undefined || span.parentSpanId !== parent.spanId)) {
      problems.push(`${where}: its parent is not the span of ${hops[hop.parent]?.service}: ${hops[hop.parent]?.name}`);
    }
    if (hop.cancel !== undefined) {
      const cancel = span.events.find((e) => e.name === "cancel")?.attributes;
      const seen = `${String(cancel?.["acp_cancel.cancel.cause"])}/${String(cancel?.["acp_cancel.cancel.origin"])}`;
      if (seen !== `${hop.cancel.cause}/${hop.cancel.origin}`) problems.push(`${where}: cancel event ${cancel === undefined ? "missing" : seen}, expected ${hop.cancel.cause}/${hop.cancel.origin}`);
    }
  });
  return { spans, found, problems };
}
