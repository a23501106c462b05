import { descendantsOf, type ProcessEntry, readProcess, readProcesses, TICKS_PER_SECOND, uptimeTicks } from "./process-tree.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export interface StoppedTools {
  /** The processes found and sent SIGTERM. */
  terminated: number[];
  /** Those still alive after the grace, sent SIGKILL. */
  killed: number[];
}

/**
 * Stops what the agent started during a stuck turn: its descendants born after the turn
 * began (`turnAgeMs` ago), never the agent itself nor what it started before the turn
 * (a language server, an MCP server). SIGTERM first; SIGKILL after `killGraceMs` to those
 * that are still there, the same process (same start time), so a reused pid is never hit.
 */
export async function stopTurnTools(agentPid: number, turnAgeMs: number, killGraceMs: number): Promise<StoppedTools> {
  // Start times have a resolution of one tick (10 ms): a process born in the tick the turn
  // began counts as born during the turn.
  const turnBegan = uptimeTicks() - Math.ceil((turnAgeMs * TICKS_PER_SECOND) / 1000) - 1;
  const targets = descendantsOf(agentPid, readProcesses()).filter((entry) => entry.startTicks >= turnBegan);
  for (const target of targets) signal(target.pid, "SIGTERM");
  if (targets.length === 0) return { terminated: [], killed: [] };
  await sleep(killGraceMs);
  const survivors = targets.filter((target) => isSameProcess(target));
  for (const survivor of survivors) signal(survivor.pid, "SIGKILL");
  return { terminated: targets.map((t) => t.pid), killed: survivors.map((s) => s.pid) };
}

function isSameProcess(entry: ProcessEntry): boolean {
  return readProcess(entry.pid)?.startTicks === entry.startTicks;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}
