/** Replica processes for the cross-replica tests: spawned, awaited until listening, killed on close. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Backend } from "./backends.js";
import type { Balancer } from "./haproxy.js";
import { guardTerminalTaskStates } from "../../src/replicas/index.js";
import { type RealServer, startPostgres } from "./servers.js";

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

/**
 * The replicas of one describe block on one cancel bus: the bus runs from the block's start to its
 * end (a server of its own, so stopping it leaves a task store up); replicas start on demand and
 * stop after each test, with the balancer when a test started one.
 */
export class ReplicaSet {
  private server: RealServer | undefined;
  private readonly started: ReplicaProcess[] = [];
  balancer: Balancer | undefined;

  constructor(
    private readonly backend: Backend,
    private readonly script: string,
    private readonly env: () => Record<string, string> = () => ({}),
  ) {
    before(async () => {
      this.server = await backend.start();
    });
    afterEach(async () => {
      await this.balancer?.close();
      this.balancer = undefined;
      await Promise.allSettled(this.started.splice(0).map((replica) => replica.close()));
    });
    after(async () => {
      await this.server?.close();
    });
  }

  get bus(): RealServer {
    if (this.server === undefined) throw new Error("the cancel bus starts in the block's before hook");
    return this.server;
  }

  async start(name: string, extra: Record<string, string> = {}): Promise<ReplicaProcess> {
    const env = { BACKEND: this.backend.name, BUS_URL: this.bus.url, ...this.env(), ...extra };
    const replica = await startReplicaProcess(this.script, name, env);
    this.started.push(replica);
    return replica;
  }
}

/**
 * A PostgreSQL for the calling describe block, migrated for the SDK's DatabaseTaskStore and with
 * final states guarded: started before its tests, stopped after them. Its `url` is read in a test.
 */
export function taskStoreDatabase(): { readonly url: string } {
  let database: RealServer | undefined;
  before(async () => {
    database = await startPostgres();
    migrateTaskStore(database.url);
    await guardTerminalTaskStates(database.url);
  });
  after(async () => {
    await database?.close();
  });
  return {
    get url() {
      if (database === undefined) throw new Error("the task store database starts in the describe block's before()");
      return database.url;
    },
  };
}
