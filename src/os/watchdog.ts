import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { KILL_GRACE_MS } from "./terminate.js";

export interface WatchdogOptions {
  /** Time between SIGTERM and SIGKILL once the parent is gone (ms, in tenths of a second). Default {@link KILL_GRACE_MS}. */
  readonly graceMs?: number;
  /** `NAME=value` only the watched processes carry in their environment: those that left the group are stopped too. */
  readonly envMarker?: string;
  /** The watchdog could not start (no /bin/sh): the group is then not watched. */
  readonly onError?: (error: Error) => void;
}

/**
 * POSIX sh, `$1` the process group: a line on stdin stands it down, end of file stops the group and
 * every process carrying the marker (docs/decisions.md, "Bridge: the SIGKILL watchdog"). dash's
 * `kill` takes no `--`; grep -z reads /proc/PID/environ's NUL-separated entries whole.
 */
const WATCHDOG_SCRIPT = [
  "if IFS= read -r _; then exit 0; fi",
  "pgid=$1 tenths=${WATCHDOG_TENTHS:-20} marker=$WATCHDOG_MARKER",
  "marked() { [ -n \"$marker\" ] && grep -lzxF -e \"$marker\" /proc/[0-9]*/environ 2>/dev/null; }",
  "stop() {",
  '  kill "-$1" "-$pgid" 2>/dev/null',
  '  for f in $(marked); do p=${f#/proc/}; kill "-$1" "${p%/environ}" 2>/dev/null; done',
  "}",
  "stop TERM",
  "i=0",
  'while [ "$i" -lt "$tenths" ] && { kill -0 "-$pgid" 2>/dev/null || [ -n "$(marked)" ]; }; do sleep 0.1; i=$((i + 1)); done',
  "stop KILL",
  "exit 0",
].join("\n");

/**
 * Arms a process that outlives its parent to stop process group `pgid` if the parent dies first
 * (SIGKILL included: the kernel closes the pipe only the parent writes to). Returns its stand-down,
 * for when the parent stopped the group itself: a reused group id is then never signalled.
 */
export function armWatchdog(pgid: number, options: WatchdogOptions = {}): () => void {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", WATCHDOG_TENTHS: String(Math.ceil((options.graceMs ?? KILL_GRACE_MS) / 100)) };
  if (options.envMarker !== undefined) env.WATCHDOG_MARKER = options.envMarker;
  // Its own session: the parent's group's Ctrl-C does not reach it. Not the parent's environment: no marker.
  const child = spawn("/bin/sh", ["-c", WATCHDOG_SCRIPT, "acp-cancel-watchdog", String(pgid)], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
    env,
  });
  child.once("error", (error) => options.onError?.(error));
  child.stdin.on("error", () => {});
  // Neither the process nor its pipe keeps the parent alive.
  child.unref();
  (child.stdin as unknown as Socket).unref();
  return () => {
    if (!child.stdin.destroyed && !child.stdin.writableEnded) child.stdin.end("stand down\n");
  };
}
