/**
 * The operating system's process table, read from Linux's /proc: who descends from whom,
 * when each started, and stopping a set of processes without ever signalling a reused pid.
 * The bottom layer for whatever supervises processes (bridge, rap); imports nothing of ours.
 */
export {
  descendantsOf,
  hasProcTable,
  type ProcessEntry,
  processesWithEnv,
  readProcess,
  readProcesses,
  stillRunning,
  TICKS_PER_SECOND,
  uptimeTicks,
} from "./process-table.js";
export { TOOL_ANNOUNCE_LAG_MS, type TurnTicks, turnsWork } from "./tool-span.js";
export { KILL_WAIT_MS, terminate, type Terminated, type TerminateOptions } from "./terminate.js";
export { armWatchdog, type WatchdogOptions } from "./watchdog.js";
