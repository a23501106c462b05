/** Debian's haproxy as the load balancer in front of replica processes (round robin, HTTP mode). */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./servers.js";
import { until } from "./until.js";

export interface Balancer {
  readonly url: string;
  close(): Promise<void>;
}

/** `port`: the balancer's own port, when the replicas must know it first (e.g. to name it in a card). */
export async function startHaproxy(ports: readonly number[], port?: number): Promise<Balancer> {
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-haproxy-"));
  const config = [
    "global",
    "  maxconn 2000",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 60s",
    "  timeout server 60s",
    "frontend replicas",
    `  bind 127.0.0.1:${port}`,
    "  default_backend replicas",
    "backend replicas",
    "  balance roundrobin",
    ...ports.map((p, i) => `  server r${i} 127.0.0.1:${p}`),
    "",
  ].join("\n");
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, config);
  const child: ChildProcess = spawn("haproxy", ["-db", "-f", file], { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode})`);
      return fetch(`${url}/`).then(() => true, () => undefined);
    }, "haproxy accepting connections");
  } catch (error) {
    await close();
    throw error;
  }
  return { url, close };
}
