import { descendantsOf, terminate, type Terminated, TICKS_PER_SECOND, uptimeTicks } from "../os/index.js";

/**
 * Stops what the agent started during a stuck turn: its descendants born after the turn
 * began (`turnAgeMs` ago), never the agent itself nor what it started before the turn
 * (a language server, an MCP server). SIGTERM first; SIGKILL after `killGraceMs` to those
 * that are still there, the same process (same start time), so a reused pid is never hit.
 */
export function stopTurnTools(agentPid: number, turnAgeMs: number, killGraceMs: number): Promise<Terminated> {
  // Start times have a resolution of one tick (10 ms): a process born in the tick the turn
  // began counts as born during the turn.
  const turnBegan = uptimeTicks() - Math.ceil((turnAgeMs * TICKS_PER_SECOND) / 1000) - 1;
  const targets = descendantsOf(agentPid).filter((entry) => entry.startTicks >= turnBegan);
  return terminate(targets, { graceMs: killGraceMs });
}
