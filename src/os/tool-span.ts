import { type ProcessEntry, TICKS_PER_SECOND } from "./process-table.js";

/** How long before its first tool call is read the agent may have started that tool: the announcement crosses a pipe. */
export const TOOL_ANNOUNCE_LAG_MS = 100;

/** A turn in /proc ticks: begun, ended (undefined: still running), its first tool call read (undefined: none yet). */
export interface TurnTicks {
  readonly from: number;
  readonly to: number | undefined;
  readonly toolCall: number | undefined;
}

/**
 * Which of `agentPid`'s `descendants` are a turn's work: born in it, not the agent's housekeeping (a child started before a
 * tool was announced, or below one). docs/decisions.md, "Bridge: which processes are a cancelled turn's".
 */
export function turnsWork(descendants: readonly ProcessEntry[], agentPid: number, turn: TurnTicks): (e: ProcessEntry) => boolean {
  const byPid = new Map(descendants.map((entry) => [entry.pid, entry]));
  const lag = Math.ceil((TOOL_ANNOUNCE_LAG_MS * TICKS_PER_SECOND) / 1000);
  const housekeepingUntil = turn.toolCall === undefined ? Infinity : turn.toolCall - lag;
  const born = (entry: ProcessEntry) => entry.startTicks >= turn.from && entry.startTicks <= (turn.to ?? Infinity);
  return (entry) => {
    let top = entry;
    for (let up = byPid.get(top.ppid); up !== undefined && top.ppid !== agentPid; up = byPid.get(top.ppid)) top = up;
    const housekeeping = top.ppid === agentPid && born(top) && top.startTicks < housekeepingUntil;
    return born(entry) && !housekeeping;
  };
}
