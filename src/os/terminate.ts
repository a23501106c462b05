import { type ProcessEntry, stillRunning } from "./process-table.js";

export interface Terminated {
  /** Those still running when SIGTERM was sent. */
  readonly terminated: number[];
  /** Those still running after the grace, sent SIGKILL. */
  readonly killed: number[];
  /** Those still running after SIGKILL and the wait for it (stuck in the kernel, or not ours to signal). */
  readonly remaining: number[];
}

/** Between SIGTERM and SIGKILL, unless a caller says otherwise: time for a process to clean up. */
export const KILL_GRACE_MS = 2_000;
/** After SIGKILL the kernel needs only moments; this bounds the wait if something is stuck in D state. */
export const KILL_WAIT_MS = 5_000;
const POLL_MS = 20;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Stops `targets`: SIGTERM, SIGKILL after `graceMs` to those still running, then waits until they
 * are gone. A signal goes only to the pid *and* start time found, never to a pid reused meanwhile.
 */
export async function terminate(targets: readonly ProcessEntry[], options: { readonly graceMs: number }): Promise<Terminated> {
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
