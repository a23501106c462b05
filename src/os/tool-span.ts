import { type ProcessEntry, TICKS_PER_SECOND } from "./process-table.js";

/**
 * How long before its announcement is read a process may start and still be the announced
 * tool: codex-acp announces `exec_command` once the command runs, and the announcement crosses
 * two processes' pipes. An agent's own housekeeping starts with the prompt, well before.
 */
export const TOOL_ANNOUNCE_LAG_MS = 100;

/** A turn's tool time in /proc ticks: from its first tool call's tick, less the lag, to its end (undefined: still running). */
export interface ToolSpan {
  readonly from: number;
  readonly to: number | undefined;
}

/** The span of a turn whose first tool call was read in tick `toolCallTick`. */
export const toolSpanFrom = (toolCallTick: number, to?: number): ToolSpan =>
  ({ from: toolCallTick - Math.ceil((TOOL_ANNOUNCE_LAG_MS * TICKS_PER_SECOND) / 1000), to });

/** Whether `entry` was born in `span`: the turn's work (docs/decisions.md, "Bridge: which processes are a cancelled turn's"). */
export const bornIn = (entry: ProcessEntry, span: ToolSpan): boolean =>
  entry.startTicks >= span.from && entry.startTicks <= (span.to ?? Infinity);
