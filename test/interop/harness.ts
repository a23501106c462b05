/**
 * What the interop cells share: a sealed environment (temp HOME, fake keys, model calls sent to
 * a loopback port that accepts and never answers), a raw JSON-RPC client that records every line
 * both ways, the two placements (direct, and behind `acp-cancel bridge`), and an orphan check.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentRecipe, writeRecipeFiles } from "../../src/check/index.js";
import { CLI } from "../support/bridge-harness.js";

export type Message = Record<string, unknown>;

/** A loopback "model" that accepts connections and never answers: a turn waits on it forever. */
export class ModelHole {
  private readonly server = net.createServer((socket) => {
    this.connections++;
    this.sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => this.sockets.delete(socket));
  });
  private readonly sockets = new Set<net.Socket>();
  connections = 0;
  port = 0;

  async open(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Every temp HOME `sealedEnv` made; removed once the run's cells are over (a root hook). */
const homes: string[] = [];
// A root hook under mocha; the bench, which runs these drivers too, has none.
if (typeof after === "function") {
  after(() => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });
}

/** A temp HOME with fake keys, every model base URL on the hole, and a marker to find processes by. */
export function sealedEnv(hole: { port: number }): { env: NodeJS.ProcessEnv; home: string; marker: string } {
  const home = mkdtempSync(join(tmpdir(), "acp-interop-"));
  homes.push(home);
  const marker = randomUUID();
  const base = `http://127.0.0.1:${hole.port}`;
  // codex ignores OPENAI_BASE_URL (it dials wss://api.openai.com): its recipe's provider instead.
  writeRecipeFiles(agentRecipe("codex-acp", base, home));
  const env: NodeJS.ProcessEnv = {};
  for (const key of ["PATH", "LANG", "TMPDIR", "SYSTEMROOT"]) if (process.env[key] !== undefined) env[key] = process.env[key];
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    CODEX_HOME: join(home, ".codex"),
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    OPENAI_API_KEY: "sk-fake-interop-0000",
    ANTHROPIC_API_KEY: "sk-ant-fake-interop-0000",
    OPENAI_BASE_URL: `${base}/v1`,
    ANTHROPIC_BASE_URL: base,
    NO_COLOR: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    NO_PROXY: "*",
    RUST_LOG: "error",
    ACP_INTEROP_MARKER: marker,
  });
  return { env, home, marker };
}

/** Live (non-zombie) processes whose environment carries `marker`: what a cell leaves behind. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, "latin1").includes(`ACP_INTEROP_MARKER=${marker}`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Kills what a failed cell left (by marker), so that one failure does not leak into the next. */
export function killAll(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** direct: nothing of ours in the path; bridge: `acp-cancel bridge`; embedded: the engine inside the agent. */
export type Placement = "direct" | "bridge" | "embedded";

export interface AgentCommand {
  command: string;
  args: string[];
}

/**
 * A raw JSON-RPC client on an agent's stdio (direct, or through a bridge process). It records
 * every line both ways, answers nothing unless told, and never hides a duplicate answer.
 */
export class WireClient {
  readonly log: { dir: "out" | "in"; message: Message }[] = [];
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private nextId = 0;
  private buffer = "";
  private stderrText = "";
  private readonly waiters = new Map<unknown, (message: Message) => void>();
  /** Answers the agent's requests; undefined leaves a request pending. */
  onRequest: (message: Message) => unknown = () => undefined;

  constructor(
    readonly placement: Placement,
    agent: AgentCommand,
    env: NodeJS.ProcessEnv,
    cwd: string,
    bridgeArgs: string[] = [],
    readonly traceFile = join(cwd, `trace-${randomUUID()}.jsonl`),
  ) {
    const [command, args] =
      placement !== "bridge"
        ? [agent.command, agent.args]
        : [process.execPath, [CLI, "bridge", "--trace", this.traceFile, ...bridgeArgs, "--", agent.command, ...agent.args]];
    // Directly, the agent leads a process group of its own, so that a careful client (this one)
    // can stop what it started too; the bridge does the same for the agent it runs.
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env, cwd, detached: placement !== "bridge" });
    this.exited = new Promise((resolve) => this.child.on("exit", (code, signal) => resolve({ code, signal })));
    this.child.stdin.on("error", () => {});
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrText += chunk.toString();
    });
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.buffer += chunk.toString();
      const lines = this.buffer.split("\n");
      this.buffer = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") this.receive(JSON.parse(line) as Message);
    });
  }

  /** Signals the direct agent's whole process group, or the bridge process. */
  signal(signal: NodeJS.Signals): void {
    try {
      if (this.placement !== "bridge" && this.child.pid !== undefined) process.kill(-this.child.pid, signal);
      else this.child.kill(signal);
    } catch {
      // already gone
    }
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Sees every message the client receives, before it is handled. */
  onIncoming: (message: Message) => void = () => {};

  private receive(message: Message): void {
    this.log.push({ dir: "in", message });
    this.onIncoming(message);
    if ("method" in message && "id" in message) {
      const result = this.onRequest(message);
      if (result !== undefined) this.send({ jsonrpc: "2.0", id: message.id, result });
      return;
    }
    if (!("method" in message)) this.waiters.get(message.id)?.(message);
  }

  send(message: Message): void {
    this.log.push({ dir: "out", message });
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  request(method: string, params: unknown): { id: number; answer: Promise<Message> } {
    const id = this.nextId++;
    const answer = new Promise<Message>((resolve) => this.waiters.set(id, resolve));
    this.send({ jsonrpc: "2.0", id, method, params });
    return { id, answer };
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  /** Lines the client received that answer `id`. */
  answersTo(id: unknown, dir: "in" | "out" = "in"): Message[] {
    return this.log.filter((e) => e.dir === dir && !("method" in e.message) && e.message.id === id).map((e) => e.message);
  }

  received(method: string): Message[] {
    return this.log.filter((e) => e.dir === "in" && e.message.method === method).map((e) => e.message);
  }

  /** Every request each way got exactly one answer. */
  unansweredOrRepeated(): string[] {
    const problems: string[] = [];
    for (const [asked, answered] of [
      ["out", "in"],
      ["in", "out"],
    ] as const) {
      for (const { message } of this.log.filter((e) => e.dir === asked && "method" in e.message && "id" in e.message)) {
        const count = this.answersTo(message.id, answered).length;
        if (count !== 1) problems.push(`${String(message.method)} #${String(message.id)} answered ${count} times`);
      }
    }
    return problems;
  }

  /** The bridge's trace, parsed (bridge placement only). */
  trace(): { hop?: string; message?: Message; note?: string }[] {
    return readFileSync(this.traceFile, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { hop?: string; message?: Message; note?: string });
  }
}

/** Waits (no timing assertion) until `check` yields a value. */
/** The stop reasons of the idle `state_update`s a v2 editor got, in order. */
export function idles(wire: WireClient): unknown[] {
  return wire.received("session/update")
    .map((m) => (m.params as { update: Message }).update)
    .filter((u) => u.sessionUpdate === "state_update" && u.state === "idle")
    .map((u) => u.stopReason);
}

export async function until<T>(check: () => T | undefined, what: string, limitMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Races a promise against a limit; `undefined` when the limit passed first. */
export async function within<T>(promise: Promise<T>, limitMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), limitMs);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}
