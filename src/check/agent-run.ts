/**
 * One run of the agent as an editor starts it, directly or behind `acp-cancel bridge`, and its session's opening.
 * Every process of the run carries a marker in its environment, so what it left running is found once orphaned.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { descendantsOf, hasProcTable, type ProcessEntry, processesWithEnv, readProcesses, stillRunning } from "../os/index.js";
import { escapeControl, jsonText } from "../wire/index.js";
import type { AgentRecipe } from "./agents.js";
import { EditorWire, type Message } from "./editor-wire.js";
import type { LeftProcess, Placement } from "./scorecard.js";

const RUN_MARKER = "ACP_CANCEL_CHECK_RUN";
const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const STDERR_KEPT = 4096;

export interface AgentCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** The agent could not be started or did not open a session: nothing can be checked. */
export class AgentUnusableError extends Error {
  constructor(message: string, readonly reason: "not-found" | "not-executable" | "unusable") {
    super(message);
  }
}

export interface OpenedSession {
  readonly sessionId: string;
  readonly initialize: Message;
  /** The version in force: the agent's answer to the one asked for. */
  readonly protocol: 1 | 2;
}

const CLIENT = { name: "acp-cancel-check", version: "1" };

/** `at`: performance.now() when it exited; `outcome`: `exit 0`, `signal SIGTERM`. */
export interface Exit {
  readonly at: number;
  readonly outcome: string;
}

export class AgentRun {
  readonly child: ChildProcessWithoutNullStreams;
  readonly wire: EditorWire;
  readonly exited: Promise<Exit>;
  exit: Exit | undefined;
  /** Why it could not be started (ENOENT, EACCES), once the spawn failed. */
  spawnError: NodeJS.ErrnoException | undefined;
  private readonly marker = randomUUID();
  private stderrTail = "";

  constructor(
    readonly placement: Placement,
    agent: AgentCommand,
    readonly recipe: AgentRecipe,
    /** Flags for `acp-cancel bridge`, before its `--`. */
    bridgeArgs: readonly string[],
  ) {
    const agentArgs = [...agent.args, ...recipe.acpArgs.filter((arg) => !agent.args.includes(arg))];
    const [command, args] = placement === "direct"
      ? [agent.command, agentArgs]
      : [process.execPath, [CLI, "bridge", ...bridgeArgs, "--", agent.command, ...agentArgs]];
    // A group of its own, so that the clean-up can stop all of it without touching ours. Started where
    // the user ran the check (a relative agent path works); its sessions open in the model source's folder.
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...recipe.env, [RUN_MARKER]: this.marker }, detached: true });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_KEPT);
    });
    this.exited = new Promise((resolve) => {
      const ended = (outcome: string) => {
        this.exit ??= { at: performance.now(), outcome };
        resolve(this.exit);
      };
      this.child.on("close", (code, signal) => ended(signal === null ? `exit ${String(code)}` : `signal ${signal}`));
      this.child.on("error", (error) => {
        this.spawnError = error;
        ended("not started");
      });
    });
    this.wire = new EditorWire(this.child);
  }

  /** Opens a session, asking for ACP `protocol` (the agent may answer an older one: that one is in force). */
  async open(cwd: string, limitMs: number, protocol: 1 | 2): Promise<OpenedSession> {
    const v1 = { clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: CLIENT };
    const init = await this.ask("initialize", { protocolVersion: protocol, ...(protocol === 2 ? { info: CLIENT, capabilities: {} } : v1) }, limitMs);
    const { authenticate, sessionSetup } = this.recipe;
    // v2 renamed `authenticate` to `auth/login` (same params).
    if (authenticate !== undefined) await this.ask(protocolOf(init) === 2 ? "auth/login" : "authenticate", authenticate, limitMs);
    const created = await this.ask("session/new", { cwd, mcpServers: [] }, limitMs);
    const sessionId = created.sessionId;
    if (typeof sessionId !== "string") {
      throw new AgentUnusableError(`session/new was answered without a sessionId: ${escapeControl(jsonText(created, 120))}`, "unusable");
    }
    for (const { method, params } of sessionSetup(sessionId)) await this.ask(method, params, limitMs);
    return { sessionId, initialize: init, protocol: protocolOf(init) };
  }

  /** Sends one request and returns its result, or throws AgentUnusableError saying why there is none. */
  private async ask(method: string, params: unknown, limitMs: number): Promise<Message> {
    const { answer } = this.wire.request(method, params);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), limitMs);
    });
    const outcome = await Promise.race([answer, this.exited.then(() => "exited" as const), late]);
    clearTimeout(timer);
    if (this.spawnError !== undefined) throw spawnFailure(this.child.spawnfile, this.spawnError);
    if (outcome === "exited" || outcome === "late") {
      const junk = this.wire.junkLines === 0
        ? ""
        : `; it wrote ${this.wire.junkLines} line(s) on stdout that are not JSON-RPC, the first: '${this.wire.firstJunk}'`;
      const stderr = this.lastStderrLine() === "" ? "" : `; its stderr ends: ${this.lastStderrLine()}`;
      const what = outcome === "late"
        ? `did not answer ${method} within ${limitMs} ms`
        : `ended (${this.exit?.outcome ?? "?"}) before answering ${method}`;
      throw new AgentUnusableError(escapeControl(`the ${this.placement === "direct" ? "agent" : "bridge"} ${what}${junk}${stderr}`), "unusable");
    }
    if ("error" in outcome) {
      const error = outcome.error as { code?: unknown; message?: unknown };
      const hint = method === "session/new" && error.code === -32000 ? " (log in to the agent first, or use --model-server)" : "";
      throw new AgentUnusableError(escapeControl(`${method} failed: ${String(error.code)} ${String(error.message)}${hint}`), "unusable");
    }
    return (outcome.result ?? {}) as Message;
  }

  /** The telling line of what the process wrote on stderr: the last that reads like an error, else the last. */
  lastStderrLine(): string {
    const lines = this.stderrTail.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("at "));
    return lines.findLast((line) => /error|not found|cannot|denied|fail/i.test(line)) ?? lines.at(-1) ?? "";
  }

  /**
   * Every running process of this run (none without /proc): the marked ones (orphans too), and the started
   * process's descendants (gemini-cli runs its shell tool with a scrubbed environment).
   */
  processes(): ProcessEntry[] {
    if (!hasProcTable()) return [];
    const all = readProcesses();
    // Entries of one read: the same process is the same object.
    const found = new Set(processesWithEnv(RUN_MARKER, this.marker, all));
    const root = all.find((entry) => entry.pid === this.child.pid);
    if (root !== undefined) for (const entry of [root, ...descendantsOf(root.pid, all)]) found.add(entry);
    return [...found];
  }

  /** Stops whatever of the run still runs: its group, then every marked process. */
  async dispose(): Promise<void> {
    this.child.stdin.end();
    const group = this.child.pid !== undefined && this.exit === undefined ? [-this.child.pid] : [];
    for (const pid of [...group, ...this.processes().filter(stillRunning).map((entry) => entry.pid)]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await this.exited;
  }
}

/** A process's command line from /proc, its arguments joined by spaces ("?" when it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return "?";
  }
}

/** `pid command line` for the table. */
export function describeProcess(entry: ProcessEntry): LeftProcess {
  const command = commandLine(entry.pid);
  return { pid: entry.pid, command: command.length > 60 ? `${command.slice(0, 60)}…` : command };
}

export function sameProcess(a: ProcessEntry, b: ProcessEntry): boolean {
  return a.pid === b.pid && a.startTicks === b.startTicks;
}

const protocolOf = (init: Message): 1 | 2 => (init.protocolVersion === 2 ? 2 : 1);

function spawnFailure(command: string, error: NodeJS.ErrnoException): AgentUnusableError {
  if (error.code === "ENOENT") return new AgentUnusableError(`agent command not found: ${command}`, "not-found");
  if (error.code === "EACCES") return new AgentUnusableError(`agent command is not executable: ${command}`, "not-executable");
  return new AgentUnusableError(`cannot start ${command}: ${error.message}`, "unusable");
}
