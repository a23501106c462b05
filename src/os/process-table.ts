import { existsSync, readdirSync, readFileSync } from "node:fs";

/** One process as /proc/PID/stat tells it (fields 4, 5, 6 and 22). */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** A process that called setsid leads a session of its own. */
  readonly session: number;
  /** When it started, in clock ticks since boot: with the pid, who it is. */
  readonly startTicks: number;
}

/** Linux's USER_HZ, the unit of /proc start times: fixed at 100 for user space on every architecture. */
export const TICKS_PER_SECOND = 100;

/** Whether this machine has a Linux /proc to read processes from. */
export function hasProcTable(): boolean {
  return process.platform === "linux" && existsSync("/proc/self/stat");
}

/** One running process's entry; undefined when it is gone, a zombie, or /proc is not Linux's. */
export function readProcess(pid: number): ProcessEntry | undefined {
  const stat = attempt(() => readFileSync(`/proc/${pid}/stat`, "utf8"));
  if (stat === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const [ppid, pgrp, session, startTicks] = [1, 2, 3, 19].map((i) => Number(fields[i])) as [number, number, number, number];
  if (state === "Z" || state === "X" || !Number.isInteger(ppid) || !Number.isFinite(startTicks)) return undefined;
  return { pid, ppid, pgrp, session, startTicks };
}

/** Every running process (zombies excluded: they run nothing). */
export function readProcesses(): ProcessEntry[] {
  return (attempt(() => readdirSync("/proc")) ?? [])
    .filter((name) => /^\d+$/.test(name))
    .map((pid) => readProcess(Number(pid)))
    .filter((entry) => entry !== undefined);
}

/**
 * The descendants of `root` by parent pid (one that called setsid is found, an orphan lost), never `root`: from `processes`
 * when given, else /proc's children files (docs/decisions.md, "Bridge: which processes are a cancelled turn's").
 */
export function descendantsOf(root: number, processes?: readonly ProcessEntry[]): ProcessEntry[] {
  if (processes === undefined) {
    const walked = breadthFirst(root, childrenOf);
    if (walked !== undefined) return walked;
  }
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of processes ?? readProcesses()) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  return breadthFirst(root, (pid) => children.get(pid) ?? []);
}

/** Every process below `root`, each once; undefined as soon as `childrenOf` cannot tell. */
function breadthFirst<T extends ProcessEntry[] | undefined>(root: number, childrenOf: (pid: number) => T): ProcessEntry[] | T {
  const found: ProcessEntry[] = [];
  const seen = new Set([root]);
  const queue = [root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const children = childrenOf(next);
    if (children === undefined) return children;
    for (const child of children) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * The running children of `pid` from /proc/PID/task/TID/children: [] when `pid` is gone,
 * undefined when a file cannot be read. A listed pid whose parent is not `pid` was reused meanwhile.
 */
function childrenOf(pid: number): ProcessEntry[] | undefined {
  const threads = attempt(() => readdirSync(`/proc/${pid}/task`));
  if (threads === undefined) return readProcess(pid) === undefined ? [] : undefined;
  const children: ProcessEntry[] = [];
  for (const tid of threads) {
    const listed = attempt(() => readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8"));
    if (listed === undefined) {
      // A thread that ended meanwhile has no file; with the process gone, neither has the main thread.
      if (existsSync(`/proc/${pid}/task/${tid}`)) return undefined;
      continue;
    }
    for (const child of listed.split(" ")) {
      const entry = child === "" ? undefined : readProcess(Number(child));
      if (entry?.ppid === pid) children.push(entry);
    }
  }
  return children;
}

/** Those of `processes` whose environment holds `name=value`: what a run started, orphans included (the user's own only). */
export function processesWithEnv(name: string, value: string, processes: readonly ProcessEntry[]): ProcessEntry[] {
  const needle = Buffer.from(`\0${name}=${value}\0`);
  const environ = (pid: number) => Buffer.concat([Buffer.from("\0"), readFileSync(`/proc/${pid}/environ`)]);
  return processes.filter((entry) => attempt(() => environ(entry.pid).includes(needle)));
}

/** Whether `entry` still runs: the same pid with the same start time, not a zombie. */
export function stillRunning(entry: ProcessEntry): boolean {
  return readProcess(entry.pid)?.startTicks === entry.startTicks;
}

/** `read()`'s value, or undefined when /proc refused it (the process is gone, or not ours). */
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Now, in /proc start-time ticks since boot. */
export function uptimeTicks(): number {
  // Rounded: "12345.67" * 100 is 1234566.99… in floating point, a tick early.
  const hundredths = Math.round(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100);
  return Math.floor((hundredths * TICKS_PER_SECOND) / 100);
}
