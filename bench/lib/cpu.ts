import { readFileSync } from "node:fs";

/** User + system CPU of another process so far, in µs (Linux /proc, 100 ticks a second; NaN elsewhere). */
export function processCpuMicros(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * (1_000_000 / 100);
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU of this process so far, in µs. */
export function ownCpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}
