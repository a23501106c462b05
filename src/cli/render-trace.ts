import type { TraceEntry, TraceHop } from "../bridge/trace-writer.js";

const ARROWS: Record<TraceHop, [string, string]> = {
  "editor->bridge": ["E", "B"],
  "bridge->agent": ["B", "A"],
  "agent->bridge": ["A", "B"],
  "bridge->editor": ["B", "E"],
};
const HOP_LABEL: Record<TraceHop, string> = {
  "editor->bridge": "editor → bridge",
  "bridge->agent": "bridge → agent ",
  "agent->bridge": "agent  → bridge",
  "bridge->editor": "bridge → editor",
};

/** "session/prompt #3", "answer #3 (error -32800)", "$/cancel_request #3". */
export function describeMessage(message: unknown): string {
  if (typeof message !== "object" || message === null) return String(message);
  const m = message as {
    id?: unknown;
    method?: unknown;
    params?: { requestId?: unknown };
    error?: { code?: unknown };
  };
  if (typeof m.method === "string") {
    if (m.method === "$/cancel_request")
      return `$/cancel_request for #${JSON.stringify(m.params?.requestId)}`;
    return m.id === undefined ? m.method : `${m.method} #${JSON.stringify(m.id)}`;
  }
  const outcome = m.error !== undefined ? `error ${String(m.error.code)}` : "result";
  return `answer #${JSON.stringify(m.id)} (${outcome})`;
}

function describeNote(note: string): string {
  try {
    const event = JSON.parse(note) as Record<string, unknown>;
    const { type, ...rest } = event;
    const fields = Object.entries(rest).map(
      ([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`,
    );
    return `${String(type)} ${fields.join(" ")}`;
  } catch {
    return note;
  }
}

/** A trace that is not what `--trace` writes, naming the first bad line. */
export class TraceFormatError extends Error {}

const HOPS = new Set(Object.keys(ARROWS));

/** The problem with one parsed trace line, or undefined when it is a trace entry. */
function entryProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const entry = value as Record<string, unknown>;
  if (typeof entry.t !== "number" || !Number.isFinite(entry.t)) return "no numeric 't' (time)";
  if (entry.hop !== undefined) {
    if (typeof entry.hop !== "string" || !HOPS.has(entry.hop)) return `unknown hop ${JSON.stringify(entry.hop)}`;
    return undefined;
  }
  if (typeof entry.note !== "string") return "neither a 'hop' nor a 'note'";
  return undefined;
}

export function parseTrace(text: string): TraceEntry[] {
  return text
    .split("\n")
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line.trim() !== "")
    .map(({ line, number }) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new TraceFormatError(`line ${number} is not JSON: ${line.slice(0, 60)}`);
      }
      const problem = entryProblem(value);
      if (problem !== undefined) throw new TraceFormatError(`line ${number} is not a trace entry: ${problem}`);
      return value as TraceEntry;
    });
}

/** A readable timeline, one line per hop or note, with the time since start. */
export function renderTimeline(entries: readonly TraceEntry[]): string {
  return entries
    .map((entry) => {
      const time = `${entry.t.toFixed(3).padStart(10)} ms`;
      if (entry.hop !== undefined)
        return `${time}  ${HOP_LABEL[entry.hop]}  ${describeMessage(entry.message)}`;
      return `${time}  ${"".padEnd(15)}  · ${describeNote(entry.note ?? "")}`;
    })
    .join("\n");
}

/** A mermaid sequence diagram of the same trace, with the time of each hop. */
export function renderMermaid(entries: readonly TraceEntry[]): string {
  const lines = [
    "sequenceDiagram",
    "  participant E as Editor",
    "  participant B as acp-cancel bridge",
    "  participant A as Agent",
  ];
  for (const entry of entries) {
    if (entry.hop !== undefined) {
      const [from, to] = ARROWS[entry.hop];
      lines.push(
        `  ${from}->>${to}: ${describeMessage(entry.message).replaceAll(";", ",")} (${entry.t.toFixed(1)} ms)`,
      );
    } else if (entry.note !== undefined) {
      lines.push(`  Note over B: ${describeNote(entry.note).replaceAll(";", ",").replaceAll("#", "")}`);
    }
  }
  return lines.join("\n");
}
