import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RunOptions {
  /** The call's signal: aborting it stops the whole process group. */
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL. Default {@link DEFAULT_KILL_GRACE_MS}. */
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

export const DEFAULT_KILL_GRACE_MS = 2_000;
const POLL_MS = 20;
/** After SIGKILL the kernel needs only moments; this bounds the wait if something is stuck in D state. */
const KILL_WAIT_MS = 5_000;

/**
 * Runs a command in its own process group, in a fresh temp dir (its cwd and TMPDIR). When
 * the signal aborts, the whole group gets SIGTERM, then SIGKILL after the grace: a
 * grandchild that ignores SIGTERM dies too. Whether stopped or finished, nothing of the
 * group is left running and the temp dir is removed before the promise settles.
 */
export async function runInProcessGroup(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const graceMs = options.graceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxOutput = options.maxOutput ?? 1024 * 1024;
  if (options.signal?.aborted) return { code: null, signal: null, stdout: "", stderr: "", stopped: true };
  const tempDir = await mkdtemp(join(tmpdir(), "rap-call-"));
  try {
    const child = spawn(command, [...args], {
      detached: true,
      cwd: tempDir,
      env: { ...process.env, ...options.env, TMPDIR: tempDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < maxOutput) stdout += chunk.toString().slice(0, maxOutput - stdout.length);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < maxOutput) stderr += chunk.toString().slice(0, maxOutput - stderr.length);
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.once("error", reject);
    });
    const pid = child.pid;
    if (pid === undefined) {
      await exited;
      throw new Error(`could not start ${command}`);
    }
    options.onSpawn?.({ pid, tempDir });
    let stopped = false;
    const stop = () => {
      stopped = true;
    };
    const aborted = new Promise<"aborted">((resolve) => {
      options.signal?.addEventListener("abort", () => (stop(), resolve("aborted")), { once: true });
    });
    const first = await Promise.race([exited, aborted]);
    // Stopped, or finished with stragglers still in the group: either way the group goes.
    await stopGroup(pid, graceMs);
    const exit = first === "aborted" ? await exited : first;
    child.stdout.destroy();
    child.stderr.destroy();
    return { ...exit, stdout, stderr, stopped };
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}

/** SIGTERM to the group, SIGKILL after the grace, then waits until no member is running. */
export async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  if (!groupRunning(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  const killAt = Date.now() + graceMs;
  while (groupRunning(pgid) && Date.now() < killAt) await sleep(POLL_MS);
  if (!groupRunning(pgid)) return;
  signalGroup(pgid, "SIGKILL");
  const giveUpAt = Date.now() + KILL_WAIT_MS;
  while (groupRunning(pgid) && Date.now() < giveUpAt) await sleep(POLL_MS);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Whether any process of the group still runs. A zombie does not count: it runs nothing,
 * and an orphan's zombie belongs to whoever reaps orphans (not every container's PID 1 does).
 */
export function groupRunning(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return signalZero(-pgid);
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = processStat(Number(entry));
    if (stat !== undefined && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true;
  }
  return false;
}

/** Whether a process runs (exists and is not a zombie). */
export function processRunning(pid: number): boolean {
  if (!signalZero(pid)) return false;
  const stat = processStat(pid);
  return stat === undefined || (stat.state !== "Z" && stat.state !== "X");
}

function processStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

function signalZero(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
