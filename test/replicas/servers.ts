/**
 * Real Debian PostgreSQL and Redis servers for the replica tests: each on a free loopback port
 * in its own temp dir, with no persistence, stoppable and restartable on the same port (the
 * fault tests), and removed with its dir on `close()` whatever happened before.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PG_BIN = process.env.ACP_CANCEL_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export interface RealServer {
  /** A URL the `pg` or `redis` client accepts. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (fast shutdown); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP to the server and its children (PostgreSQL's backends): it keeps its sockets and answers nothing. */
  pause(): void;
  /** SIGCONT: the paused server goes on. */
  resume(): void;
  /** Stops it if running and removes its temp dir. */
  close(): Promise<void>;
}

/** A free loopback port (the kernel's pick, released before use). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` system user. */
function asPostgresUser(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  return ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", command, ...args]];
}

export async function startPostgres(): Promise<RealServer> {
  // As root the server runs as `postgres`, which must reach its data dir: the test run's own
  // TMPDIR (test/support/temp-root.ts) is private to root, so the dir goes in /tmp itself.
  // `close()` removes it either way.
  const dir = mkdtempSync(join(process.getuid?.() === 0 ? "/tmp" : tmpdir(), "acp-cancel-pg-"));
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    const ids = execFileSync("id", ["-u", "postgres"]).toString().trim();
    const gid = execFileSync("id", ["-g", "postgres"]).toString().trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const [initdb, initArgs] = asPostgresUser(join(PG_BIN, "initdb"), [
    "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions", "-E", "UTF8",
  ]);
  execFileSync(initdb, initArgs, { stdio: "ignore" });
  const port = await freePort();
  const [postgres, args] = asPostgresUser(join(PG_BIN, "postgres"), [
    "-D", data, "-p", String(port), "-k", dir,
    "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
    "-c", "full_page_writes=off", "-c", "max_connections=200",
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return managed(dir, port, url, () => spawn(postgres, args, { stdio: "ignore" }), "SIGINT", () => pgReady(port));
}

export async function startRedis(): Promise<RealServer> {
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-redis-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
  return managed(dir, port, `redis://127.0.0.1:${port}`, () => spawn("redis-server", args, { stdio: "ignore" }), "SIGTERM");
}

async function managed(
  dir: string,
  port: number,
  url: string,
  launch: () => ChildProcess,
  stopSignal: NodeJS.Signals,
  ready: () => Promise<boolean> = async () => true,
): Promise<RealServer> {
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child?.pid !== undefined && child.exitCode === null) server.resume(); // a paused server cannot stop
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    running.kill(stopSignal);
    await exited;
  };
  const start = async () => {
    if (child !== undefined) return;
    const launched = launch();
    child = launched;
    const failed = new Promise<never>((_, reject) =>
      launched.once("exit", (code) => reject(new Error(`${url}: server exited (${code}) before accepting connections`))));
    failed.catch(() => undefined);
    await Promise.race([untilAccepting(port, ready), failed]);
  };
  const signalAll = (signal: "STOP" | "CONT") => {
    const pid = child?.pid;
    if (pid === undefined) throw new Error(`${url}: not running`);
    process.kill(pid, `SIG${signal}`);
    // PostgreSQL serves each connection from a child of the postmaster (pkill exits 1 when there are none).
    spawnSync("pkill", [`-${signal}`, "-P", String(pid)]);
  };
  const server: RealServer = {
    url,
    port,
    stop,
    start,
    pause: () => signalAll("STOP"),
    resume: () => signalAll("CONT"),
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await start();
  } catch (error) {
    await server.close();
    throw error;
  }
  return server;
}

/** PostgreSQL accepts TCP before it accepts queries: ask pg_isready. */
async function pgReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const check = spawn(join(PG_BIN, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-q"], { stdio: "ignore" });
    check.once("exit", (code) => resolve(code === 0));
    check.once("error", () => resolve(false));
  });
}

async function untilAccepting(port: number, ready: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (accepted && await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing accepted connections on 127.0.0.1:${port}`);
}
