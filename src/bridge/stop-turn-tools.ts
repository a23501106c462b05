import { descendantsOf, terminate, type Terminated, TICKS_PER_SECOND, uptimeTicks } from "../os/index.js";

/** Stops the agent's descendants born during a stuck turn (`turnAgeMs` ago): SIGTERM, then SIGKILL. */
export function stopTurnTools(agentPid: number, turnAgeMs: number, killGraceMs: number): Promise<Terminated> {
  // Start times are in ticks: one born in the turn's first tick counts.
  const turnBegan = uptimeTicks() - Math.ceil((turnAgeMs * TICKS_PER_SECOND) / 1000) - 1;
  const targets = descendantsOf(agentPid).filter((entry) => entry.startTicks >= turnBegan);
  return terminate(targets, { graceMs: killGraceMs });
}
