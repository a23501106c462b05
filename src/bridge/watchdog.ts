import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";

/**
 * What the watchdog runs (POSIX sh; `$1` is the agent's process group). It waits on its stdin,
 * the read end of a pipe whose only write end the bridge holds:
 * - a line arrives: the bridge stood it down (it stopped the group itself); exit quietly;
 * - end of file without a line: the bridge died, even by SIGKILL (the kernel closes the
 *   pipe), so the group is stopped: SIGTERM, then SIGKILL after up to 2 s.
 * dash's `kill` takes no `--`; `-N` after the signal names the group.
 */
const SCRIPT = [
  "if IFS= read -r _; then exit 0; fi",
  'kill -TERM "-$1" 2>/dev/null || exit 0',
  "i=0",
  'while [ "$i" -lt 20 ] && kill -0 "-$1" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done',
  'kill -KILL "-$1" 2>/dev/null',
  "exit 0",
].join("\n");

/** Outlives the bridge to stop the agent's group if the bridge dies first (editors SIGKILL their agent servers). */
export class Watchdog {
  private readonly child: ChildProcess;
  private stoodDown = false;

  /** Arms a watchdog over process group `pgid`; `onError` hears of a watchdog that cannot start. */
  constructor(pgid: number, onError: (error: Error) => void) {
    // A session of its own: a signal sent to the bridge's group (Ctrl-C) does not reach it.
    this.child = spawn("/bin/sh", ["-c", SCRIPT, "acp-cancel-watchdog", String(pgid)], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    this.child.once("error", onError);
    this.child.stdin?.on("error", () => {});
    // Neither the process nor its pipe keeps the bridge alive.
    this.child.unref();
    (this.child.stdin as Socket | null)?.unref();
  }

  /** The bridge stopped the group itself: the watchdog exits without signalling anything. */
  standDown(): void {
    if (this.stoodDown) return;
    this.stoodDown = true;
    const stdin = this.child.stdin;
    if (stdin !== null && !stdin.destroyed) stdin.end("stand down\n");
  }
}
