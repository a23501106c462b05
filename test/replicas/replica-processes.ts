/** Replica processes for the cross-replica tests: spawned, awaited until listening, killed on close. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface ReplicaProcess {
  readonly name: string;
  readonly port: number;
  readonly baseUrl: string;
  /** SIGKILL: the replica dies with its work running (no clean-up of any kind). */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL if it lingers. */
  close(): Promise<void>;
}

export async function startReplicaProcess(script: string, name: string, env: Record<string, string>): Promise<ReplicaProcess> {
  const child: ChildProcess = spawn(process.execPath, [script], {
    env: { ...process.env, ...env, REPLICA: name },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`replica ${name} exited (${code}) before listening`)));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    name,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
    close: async () => {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Creates the SDK's task table with the SDK's own migration tool (`a2a-db upgrade`), an operator step. */
export function migrateTaskStore(url: string): void {
  const require = createRequire(import.meta.url);
  const sdkDist = dirname(require.resolve("@a2a-js/sdk")); // …/@a2a-js/sdk/dist/index.cjs
  execFileSync(process.execPath, [join(sdkDist, "cli", "a2a_db.js"), "upgrade", "--url", url], { stdio: "pipe" });
}

export const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
