import { readdirSync, readFileSync } from "node:fs";

/** One process as /proc/PID/stat tells it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** When it started, in clock ticks since boot (field 22 of /proc/PID/stat). */
  startTicks: number;
}

/**
 * Linux's USER_HZ: the unit of /proc start times. It is 100 on every architecture Node
 * runs on (the kernel keeps it fixed for user space), so no sysconf call is needed.
 */
export const TICKS_PER_SECOND = 100;

/** One process's entry, or undefined when it is gone (or /proc is not Linux's). */
export function readProcess(pid: number): ProcessEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const ppid = Number(fields[1]);
  const startTicks = Number(fields[19]);
  if (state === "Z" || !Number.isInteger(ppid) || !Number.isFinite(startTicks)) return undefined;
  return { pid, ppid, startTicks };
}

/** Every live process (zombies excluded: they are already dead). */
export function readProcesses(): ProcessEntry[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const entries: ProcessEntry[] = [];
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const entry = readProcess(Number(name));
    if (entry !== undefined) entries.push(entry);
  }
  return entries;
}

/** The descendants of `root` (children, their children, …), never `root` itself. */
export function descendantsOf(root: number, processes: readonly ProcessEntry[]): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of processes) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  const found: ProcessEntry[] = [];
  const queue = [root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (child.pid === root) continue;
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** Now, in /proc start-time ticks since boot. */
export function uptimeTicks(): number {
  const seconds = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return Math.floor(seconds * TICKS_PER_SECOND);
}
