import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { CLI, peer } from "./paths.js";

export interface Child {
  proc: ChildProcessWithoutNullStreams;
  stderr(): string;
  exited: Promise<void>;
  /** Closes stdin and waits for the exit, killing after a while. */
  stop(): Promise<void>;
}

export function start(command: string, args: readonly string[], nodeOptions: string[] = []): Child {
  const proc = spawn(command, [...nodeOptions, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.stdin.on("error", () => {});
  return {
    proc,
    stderr: () => stderr,
    exited,
    async stop() {
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const node = process.execPath;

/**
 * How the agent is reached: directly, through the plain byte relay, through the relay with the
 * agent in a session of its own (as the bridge starts it), or through `acp-cancel bridge`.
 */
export type Route = "direct" | "relay" | "relay-own-session" | "bridge";

/** Spawns a compiled peer script, optionally behind the relay or the bridge. */
export function startPeer(name: string, args: readonly string[] = [], route: Route = "direct"): Child {
  const agent = [peer(name), ...args];
  if (route === "relay") return start(node, [peer("byte-relay"), node, ...agent]);
  if (route === "relay-own-session") return start(node, [peer("byte-relay"), "--own-session", node, ...agent]);
  if (route === "bridge") return start(node, [CLI, "bridge", "--", node, ...agent]);
  return start(node, agent);
}
