import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { armWatchdog } from "../os/index.js";
import { ExitCode } from "./exit-codes.js";

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AgentProcess {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<AgentExit>;
  /** Signals the agent's whole process group (it was started as a group leader). */
  signalGroup(signal: NodeJS.Signals): void;
  /** The bridge stopped the group itself: its watchdog stands down. */
  release(): void;
}

/** A spawn failure with a message for people and the exit status to report it with. */
export class AgentSpawnError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

/** Starts the agent as a process group leader, so stopping it stops what it started: no orphans. */
export function spawnAgent(command: string, args: readonly string[], warn: (text: string) => void): Promise<AgentProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
    const exited = new Promise<AgentExit>((done) => child.once("exit", (code, signal) => done({ code, signal })));
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") reject(new AgentSpawnError(`agent command not found: ${command}`, ExitCode.notFound));
      else if (error.code === "EACCES") {
        const what = isDirectory(command) ? "is a directory" : "is not executable";
        reject(new AgentSpawnError(`agent command ${what}: ${command}`, ExitCode.notExecutable));
      } else reject(new AgentSpawnError(`cannot start agent ${command}: ${error.message}`, ExitCode.internal));
    });
    child.once("spawn", () => {
      const watchdogFailed = (error: Error) => warn(`the agent's watchdog did not start: ${error.message}`);
      const standDown = child.pid === undefined ? undefined : armWatchdog(child.pid, { onError: watchdogFailed });
      resolve({
        child,
        exited,
        signalGroup(signal) {
          if (child.pid === undefined) return;
          try {
            process.kill(-child.pid, signal);
          } catch {
            // The group is already gone.
          }
        },
        release: () => standDown?.(),
      });
    });
  });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** "exited with code 3", "was killed by SIGKILL". */
export function describeExit(exit: AgentExit): string {
  return exit.signal !== null ? `agent was killed by ${exit.signal}` : `agent exited with code ${exit.code ?? 0}`;
}

/** The bridge's own exit status for an agent exit: its code, or 128 + signal number. */
export function exitStatusFor(exit: AgentExit): number {
  if (exit.signal !== null) return ExitCode.signalBase + (osConstants.signals[exit.signal] ?? 0);
  return exit.code ?? 0;
}
