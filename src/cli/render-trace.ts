import type { TraceEntry, TraceHop } from "../bridge/trace-writer.js";
import { escapeControl } from "../wire/index.js";

/** A trace line: the bridge's, or a cross-protocol trace's (hops between any two parties, a ready `label`, its protocol). */
export type RenderableEntry = Omit<TraceEntry, "hop"> & {
  hop?: string;
  label?: string;
  protocol?: string;
  party?: string;
};

/** The bridge's own hops; the diagram names each end by its initial (E, B, A). */
const BRIDGE_HOPS: ReadonlySet<string> = new Set<TraceHop>(["editor->bridge", "bridge->agent", "agent->bridge", "bridge->editor"]);

/** "session/prompt #3", "answer #3 (error -32800)", "$/cancel_request #3". */
export function describeMessage(message: unknown): string {
  if (typeof message !== "object" || message === null) return String(message);
  const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown }; error?: { code?: unknown } };
  if (m.method === "$/cancel_request") return `$/cancel_request for #${JSON.stringify(m.params?.requestId)}`;
  if (typeof m.method === "string") return m.id === undefined ? m.method : `${m.method} #${JSON.stringify(m.id)}`;
  const outcome = m.error !== undefined ? `error ${String(m.error.code)}` : "result";
  return `answer #${JSON.stringify(m.id)} (${outcome})`;
}

function describeNote(note: string): string {
  try {
    const event = JSON.parse(note) as Record<string, unknown>;
    const { type, ...rest } = event;
    const fields = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    return `${String(type)} ${fields.join(" ")}`;
  } catch {
    return note;
  }
}

/** A trace that is not what `--trace` writes, naming the first bad line. */
export class TraceFormatError extends Error {}

const CROSS_HOP = /^[\w.-]+->[\w.-]+$/;

/** The problem with one parsed trace line, or undefined when it is a trace entry. */
function entryProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const entry = value as Record<string, unknown>;
  if (typeof entry.t !== "number" || !Number.isFinite(entry.t)) return "no numeric 't' (time)";
  if (entry.hop !== undefined) {
    // A bridge hop, or a cross-protocol one naming two parties ("agent->mcp-server").
    const known = typeof entry.hop === "string" && (BRIDGE_HOPS.has(entry.hop) || CROSS_HOP.test(entry.hop));
    return known ? undefined : `unknown hop ${JSON.stringify(entry.hop)}`;
  }
  return typeof entry.note === "string" ? undefined : "neither a 'hop' nor a 'note'";
}

export function parseTrace(text: string): RenderableEntry[] {
  return text.split("\n").flatMap((line, index) => {
    if (line.trim() === "") return [];
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new TraceFormatError(`line ${index + 1} is not JSON: ${line.slice(0, 60)}`);
    }
    const problem = entryProblem(value);
    if (problem !== undefined) throw new TraceFormatError(`line ${index + 1} is not a trace entry: ${problem}`);
    return [value as RenderableEntry];
  });
}

/** A readable timeline, one line per hop or note, with the time since start; control characters escaped. */
export function renderTimeline(entries: readonly RenderableEntry[]): string {
  return entries
    .map((entry) => {
      const time = `${entry.t.toFixed(3).padStart(10)} ms`;
      const protocol = entry.protocol === undefined ? "" : `${entry.protocol.padEnd(3)}  `;
      if (entry.hop !== undefined) {
        const [from = "", to = ""] = entry.hop.split("->");
        // The bridge's ends padded to one width, so its arrows line up.
        const hop = BRIDGE_HOPS.has(entry.hop) ? `${from.padEnd(6)} → ${to.padEnd(6)}` : `${from} → ${to}`;
        return `${time}  ${protocol}${hop}  ${entry.label ?? describeMessage(entry.message)}`;
      }
      if (entry.party !== undefined) return `${time}  ${protocol}${entry.party} · ${entry.note ?? ""}`;
      return `${time}  ${"".padEnd(15)}  · ${describeNote(entry.note ?? "")}`;
    })
    .map(escapeControl)
    .join("\n");
}

/** A mermaid sequence diagram of the same trace, with the time of each hop; control characters escaped. */
export function renderMermaid(entries: readonly RenderableEntry[]): string {
  if (entries.some((entry) => entry.hop !== undefined && !BRIDGE_HOPS.has(entry.hop))) return renderCrossMermaid(entries);
  const lines = [
    "sequenceDiagram",
    "  participant E as Editor",
    "  participant B as acp-cancel bridge",
    "  participant A as Agent",
  ];
  for (const entry of entries) {
    if (entry.hop !== undefined) {
      const [from, to] = entry.hop.split("->").map((end) => end.charAt(0).toUpperCase());
      lines.push(`  ${from}->>${to}: ${describeMessage(entry.message).replaceAll(";", ",")} (${entry.t.toFixed(1)} ms)`);
    } else if (entry.note !== undefined) {
      lines.push(`  Note over B: ${safe(describeNote(entry.note))}`);
    }
  }
  return lines.map(escapeControl).join("\n");
}

/** Mermaid-safe text: no `;` or `#` (they end a statement or start an entity). */
const safe = (text: string) => text.replaceAll(";", ",").replaceAll("#", "");

/** A cross-protocol trace: one participant per party, in order of appearance. */
function renderCrossMermaid(entries: readonly RenderableEntry[]): string {
  const parties = [...new Set(entries.flatMap((entry) => entry.hop?.split("->") ?? [entry.party ?? "trace"]))];
  const idOf = (party: string) => `P${parties.indexOf(party)}`;
  const body: string[] = [];
  for (const entry of entries) {
    const tag = entry.protocol === undefined ? "" : `[${entry.protocol}] `;
    if (entry.hop !== undefined) {
      const [from = "?", to = "?"] = entry.hop.split("->");
      const text = entry.label ?? describeMessage(entry.message);
      body.push(`  ${idOf(from)}->>${idOf(to)}: ${safe(`${tag}${text}`)} (${entry.t.toFixed(1)} ms)`);
    } else if (entry.note !== undefined) {
      body.push(`  Note over ${idOf(entry.party ?? "trace")}: ${safe(`${tag}${entry.note}`)} (${entry.t.toFixed(1)} ms)`);
    }
  }
  const participants = parties.map((party) => `  participant ${idOf(party)} as ${safe(party)}`);
  return ["sequenceDiagram", ...participants, ...body].map(escapeControl).join("\n");
}
