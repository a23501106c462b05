/**
 * The editor's opening: initialize, authenticate when asked, session/new. What goes wrong here is said in one
 * line (the agent exited, printed junk, refused, stayed silent): the check cannot go on without a session.
 */
import { escapeControl } from "../wire/index.js";
import type { AgentRun } from "./agent-run.js";
import type { Message } from "./editor-wire.js";

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

/** Opens a session, asking for ACP `protocol` (the agent may answer an older one: that one is in force). */
export async function openSession(run: AgentRun, cwd: string, limitMs: number, protocol: 1 | 2): Promise<OpenedSession> {
  const v1 = { clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: CLIENT };
  const init = await ask(run, "initialize", { protocolVersion: protocol, ...(protocol === 2 ? { info: CLIENT, capabilities: {} } : v1) }, limitMs);
  // v2 renamed `authenticate` to `auth/login` (same params).
  const { authenticate, sessionSetup } = run.recipe;
  if (authenticate !== undefined) await ask(run, protocolOf(init) === 2 ? "auth/login" : "authenticate", authenticate, limitMs);
  const created = await ask(run, "session/new", { cwd, mcpServers: [] }, limitMs);
  const sessionId = created.sessionId;
  if (typeof sessionId !== "string") {
    throw new AgentUnusableError(`session/new was answered without a sessionId: ${preview(created)}`, "unusable");
  }
  for (const { method, params } of sessionSetup(sessionId)) await ask(run, method, params, limitMs);
  return { sessionId, initialize: init, protocol: protocolOf(init) };
}

const protocolOf = (init: Message): 1 | 2 => (init.protocolVersion === 2 ? 2 : 1);

/** Sends one request and returns its result, or throws AgentUnusableError saying why there is none. */
async function ask(run: AgentRun, method: string, params: unknown, limitMs: number): Promise<Message> {
  const { answer } = run.wire.request(method, params);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), limitMs);
  });
  const outcome = await Promise.race([answer, run.exited.then(() => "exited" as const), late]);
  clearTimeout(timer);
  if (run.spawnError !== undefined) throw spawnFailure(run, run.spawnError);
  if (outcome === "exited" || outcome === "late") {
    const junk = run.wire.junkLines === 0
      ? ""
      : `; it wrote ${run.wire.junkLines} line(s) on stdout that are not JSON-RPC, the first: '${run.wire.firstJunk}'`;
    const stderr = run.lastStderrLine() === "" ? "" : `; its stderr ends: ${run.lastStderrLine()}`;
    const what = outcome === "late"
      ? `did not answer ${method} within ${limitMs} ms`
      : `ended (${run.exit?.outcome ?? "?"}) before answering ${method}`;
    throw new AgentUnusableError(escapeControl(`the ${run.placement === "direct" ? "agent" : "bridge"} ${what}${junk}${stderr}`), "unusable");
  }
  if ("error" in outcome) {
    const error = outcome.error as { code?: unknown; message?: unknown };
    const hint = method === "session/new" && error.code === -32000 ? " (log in to the agent first, or use --model-server)" : "";
    throw new AgentUnusableError(escapeControl(`${method} failed: ${String(error.code)} ${String(error.message)}${hint}`), "unusable");
  }
  return (outcome.result ?? {}) as Message;
}

function spawnFailure(run: AgentRun, error: NodeJS.ErrnoException): AgentUnusableError {
  const command = run.child.spawnfile;
  if (error.code === "ENOENT") return new AgentUnusableError(`agent command not found: ${command}`, "not-found");
  if (error.code === "EACCES") return new AgentUnusableError(`agent command is not executable: ${command}`, "not-executable");
  return new AgentUnusableError(`cannot start ${command}: ${error.message}`, "unusable");
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return escapeControl(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}
