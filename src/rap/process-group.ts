import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  armWatchdog,
  descendantsOf,
  hasProcTable,
  KILL_GRACE_MS,
  KILL_WAIT_MS,
  processesWithEnv,
  readProcesses,
  terminate,
  uptimeTicks,
} from "../os/index.js";

export interface RunOptions {
  /** The call's signal: aborting it stops the whole process group. */
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL. Default {@link KILL_GRACE_MS}. */
  readonly graceMs?: number;
  /** Extra environment; TMPDIR always points at the call's temp dir. */
  readonly env?: Readonly<Record<string, string>>;
  /** Keeps at most this many bytes of stdout and of stderr. Default 1 MiB. */
  readonly maxOutput?: number;
  /** Called once the command runs, with its pid (= its process group id) and temp dir. */
  readonly onSpawn?: (info: { pid: number; tempDir: string }) => void;
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the run was stopped by the signal rather than ending on its own. */
  readonly stopped: boolean;
}

const POLL_MS = 20;
/** The environment variable that marks every process of one run (its value is the run's id). */
export const RUN_MARKER = "ACP_CANCEL_RUN";

/**
 * Runs a command in its own process group and a fresh temp dir (cwd and TMPDIR); when the signal aborts,
 * all the run started is stopped (`stopRun`). Nothing of it, nor its temp dir, is left when it settles; if
 * this process dies first, a watchdog stops the run (docs/decisions.md, "RAP: a runner that dies").
 */
export async function runInProcessGroup(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const { signal: abort, graceMs = KILL_GRACE_MS, maxOutput = 1024 * 1024 } = options;
  const notStarted = { code: null, signal: null, stdout: "", stderr: "", stopped: true } as const;
  if (abort?.aborted) return notStarted;
  // Listened for from the start: an abort while the temp dir is made must not be missed.
  const listening = new AbortController();
  const aborted = new Promise<"aborted">((resolve) => {
    abort?.addEventListener("abort", () => resolve("aborted"), { once: true, signal: listening.signal });
  });
  const tempDir = await mkdtemp(join(tmpdir(), "rap-call-"));
  const marker = randomUUID();
  // Everything of the run is born from now on (less one tick: start times are rounded down).
  const bornAfter = hasProcTable() ? uptimeTicks() - 1 : 0;
  try {
    if (abort?.aborted) return notStarted; // aborted while the temp dir was made: nothing starts
    const child = spawn(command, [...args], {
      detached: true,
      cwd: tempDir,
      env: { ...process.env, ...options.env, TMPDIR: tempDir, [RUN_MARKER]: marker },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { stdout: "", stderr: "" };
    for (const name of ["stdout", "stderr"] as const) {
      child[name].on("data", (chunk: Buffer) => {
        if (output[name].length < maxOutput) output[name] += chunk.toString().slice(0, maxOutput - output[name].length);
      });
    }
    // Rejects with the spawn error (a missing command) instead.
    const exited = once(child, "exit") as Promise<[code: number | null, signal: NodeJS.Signals | null]>;
    const pid = child.pid;
    if (pid === undefined) {
      await exited;
      throw new Error(`could not start ${command}`);
    }
    const run: RunIdentity = { pid, startTicks: bornAfter, marker };
    const standDown = armWatchdog(pid, { graceMs, envMarker: `${RUN_MARKER}=${marker}` });
    let first: Awaited<typeof exited> | "aborted";
    try {
      options.onSpawn?.({ pid, tempDir });
      first = await Promise.race([exited, aborted]);
      // Stopped, or finished with stragglers left behind: either way all of the run goes.
      await stopRun(run, graceMs);
    } finally {
      standDown();
    }
    const [code, signal] = first === "aborted" ? await exited : first;
    child.stdout.destroy();
    child.stderr.destroy();
    return { code, signal, ...output, stopped: abort?.aborted === true };
  } finally {
    listening.abort();
    await rm(tempDir, { recursive: true, force: true });
  }
}

interface RunIdentity {
  readonly pid: number;
  /** Just before the command started (ticks since boot): nothing of the run is older. */
  readonly startTicks: number;
  readonly marker: string;
}

/**
 * SIGTERM, then SIGKILL after the grace, to all a run started since it began: its group, descendants and
 * marked orphans (docs/decisions.md, "How `runInProcessGroup` finds what a run started").
 */
async function stopRun(run: RunIdentity, graceMs: number): Promise<void> {
  if (!hasProcTable()) return stopGroup(run.pid, graceMs);
  // A process forked while the first round was signalling is caught by the next.
  for (let round = 0; round < 3; round++) {
    const all = readProcesses();
    const group = all.filter((p) => p.pgrp === run.pid);
    const found = [...group, ...descendantsOf(run.pid, all), ...processesWithEnv(RUN_MARKER, run.marker, all)];
    const members = [...new Map(found.filter((p) => p.startTicks >= run.startTicks).map((p) => [p.pid, p])).values()];
    if (members.length === 0) return;
    await terminate(members, { graceMs: round === 0 ? graceMs : 0 });
  }
}

async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  for (const [signal, waitMs] of [["SIGTERM", graceMs], ["SIGKILL", KILL_WAIT_MS]] as const) {
    if (!groupRunning(pgid)) return;
    try {
      process.kill(-pgid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
    const until = Date.now() + waitMs;
    while (groupRunning(pgid) && Date.now() < until) await sleep(POLL_MS);
  }
}

/** Whether any process of the group still runs; a zombie runs nothing, so it does not count. */
export function groupRunning(pgid: number): boolean {
  if (hasProcTable()) return readProcesses().some((entry) => entry.pgrp === pgid);
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
