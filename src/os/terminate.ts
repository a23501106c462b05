import { type ProcessEntry, stillRunning } from "./process-table.js";

export interface Terminated {
  /** The pids sent SIGTERM (those still running when it was sent). */
  readonly terminated: number[];
  /** Those still running after the grace, sent SIGKILL. */
  readonly killed: number[];
  /** Those still running after SIGKILL and the wait for it (stuck in the kernel, or not ours to signal). */
  readonly remaining: number[];
}

export interface TerminateOptions {
  /** Time between SIGTERM and SIGKILL (ms). */
  readonly graceMs: number;
}

/** After SIGKILL the kernel needs only moments; this bounds the wait if something is stuck in D state. */
export const KILL_WAIT_MS = 5_000;
const POLL_MS = 20;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Stops `targets`: SIGTERM, then SIGKILL after the grace to those still running, then waits
 * until they are gone. Every signal goes only to a process with the pid *and* start time it
 * was found with, so a pid the kernel reused meanwhile is never signalled.
 */
export async function terminate(targets: readonly ProcessEntry[], options: TerminateOptions): Promise<Terminated> {
  const alive = () => targets.filter(stillRunning);
  const terminated = alive();
  for (const target of terminated) signal(target.pid, "SIGTERM");
  const killAt = Date.now() + options.graceMs;
  while (alive().length > 0 && Date.now() < killAt) await sleep(POLL_MS);
  const survivors = alive();
  for (const survivor of survivors) signal(survivor.pid, "SIGKILL");
  const giveUpAt = Date.now() + KILL_WAIT_MS;
  while (survivors.some(stillRunning) && Date.now() < giveUpAt) await sleep(POLL_MS);
  return {
    terminated: terminated.map((t) => t.pid),
    killed: survivors.map((s) => s.pid),
    remaining: survivors.filter(stillRunning).map((s) => s.pid),
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone meanwhile (ESRCH), or not ours (EPERM): nothing to stop.
  }
}
