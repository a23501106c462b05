/**
 * One editor, three placements, for the real-agent cells: `direct` is a raw client on the agent's
 * stdio; `bridge` the same on `acp-cancel bridge -- <agent>` (the wire recorded both ways);
 * `embedded` is an @agentclientprotocol/sdk 2.4.0 client adopting acp-cancel with
 * `withCancellation`, the agent its subprocess. All expose the same few verbs, so a cell is
 * written once.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { type CancellableApp, withCancellation, type WithCancellationOptions } from "../../src/index.js";
import { rmSync } from "node:fs";
import { type AgentCommand, killAll, type Message, WireClient, within } from "./harness.js";
import type { ModelServer } from "../../src/check/index.js";

/** A permission dialog the agent opened: answer it, or leave it open. */
export interface Dialog {
  params: Message;
  answer(outcome: { outcome: "cancelled" } | { outcome: "selected"; optionId: string }): void;
}

/** How a session is opened: what the agent needs besides initialize and session/new. */
export interface Handshake {
  authenticate?: { methodId: string; _meta?: Record<string, unknown> } | undefined;
  /** Requests sent once the session exists (e.g. a permission mode). */
  sessionSetup?: (sessionId: string) => { method: string; params: Record<string, unknown> }[];
}

/** A prompt in flight: its answer, and the editor's two ways to stop it. */
export interface Turn {
  readonly answer: Promise<Message>;
  /** `$/cancel_request` for this prompt (embedded: the SDK's cancellationSignal). */
  cancelRequest(): void;
}

export interface Driver {
  readonly placement: "direct" | "bridge" | "embedded";
  /** The process the editor started (the bridge, or the agent itself). */
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<unknown>;
  /** Dialogs the agent opened, in order. */
  readonly dialogs: Dialog[];
  /** Each `session/update` the editor received, with the prompt answers it got, in order. */
  readonly seen: { kind: "update" | "answer"; message: Message }[];
  /** What to do with a dialog as it opens (default: leave it open). */
  onDialog: (dialog: Dialog) => void;
  open(handshake: Handshake, cwd: string): Promise<string>;
  /** `session/load` of an existing session (after a restart), then its setup. */
  load(handshake: Handshake, sessionId: string, cwd: string): Promise<Message>;
  startPrompt(sessionId: string, text: string): Turn;
  prompt(sessionId: string, text: string): Promise<Message>;
  cancel(sessionId: string): void;
  /** Protocol problems: requests not answered exactly once (bridge), or thrown errors. */
  problems(): string[];
  end(): void;
}

export function wireDriver(
  placement: "direct" | "bridge",
  agent: AgentCommand,
  env: NodeJS.ProcessEnv,
  cwd: string,
  bridgeArgs: string[] = [],
): Driver & { wire: WireClient } {
  const wire = new WireClient(placement, agent, env, cwd, bridgeArgs);
  const initialized = async (handshake: Handshake) => {
    await wire.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    }).answer;
    if (handshake.authenticate !== undefined) await wire.request("authenticate", handshake.authenticate).answer;
  };
  const setUp = async (handshake: Handshake, sessionId: string) => {
    for (const { method, params } of handshake.sessionSetup?.(sessionId) ?? []) await wire.request(method, params).answer;
  };
  const dialogs: Dialog[] = [];
  const seen: Driver["seen"] = [];
  const driver: Driver & { wire: WireClient } = {
    placement,
    wire,
    child: wire.child,
    exited: wire.exited,
    dialogs,
    seen,
    onDialog: () => {},
    async open(handshake, dir) {
      await initialized(handshake);
      const created = await wire.request("session/new", { cwd: dir, mcpServers: [] }).answer;
      const sessionId = (created.result as { sessionId: string }).sessionId;
      await setUp(handshake, sessionId);
      return sessionId;
    },
    async load(handshake, sessionId, dir) {
      await initialized(handshake);
      const loaded = await wire.request("session/load", { sessionId, cwd: dir, mcpServers: [] }).answer;
      await setUp(handshake, sessionId);
      return loaded;
    },
    startPrompt(sessionId, text) {
      const { id, answer } = wire.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      void answer.then((message) => seen.push({ kind: "answer", message }));
      return { answer, cancelRequest: () => wire.notify("$/cancel_request", { requestId: id }) };
    },
    prompt(sessionId, text) {
      return driver.startPrompt(sessionId, text).answer;
    },
    cancel(sessionId) {
      wire.notify("session/cancel", { sessionId });
    },
    problems: () => wire.unansweredOrRepeated(),
    end() {
      wire.child.stdin.end();
    },
  };
  wire.onIncoming = (message) => {
    if (message.method === "session/update") seen.push({ kind: "update", message });
  };
  wire.onRequest = (message) => {
    if (message.method !== "session/request_permission") return undefined;
    const dialog: Dialog = {
      params: message.params as Message,
      answer: (outcome) => wire.send({ jsonrpc: "2.0", id: message.id, result: { outcome } }),
    };
    dialogs.push(dialog);
    driver.onDialog(dialog);
    return undefined;
  };
  return driver;
}

/** The embedded editor, with its app and its connection to the agent for cells that go past the verbs. */
type ClientApp = ReturnType<typeof acp.client>;
export interface EmbeddedDriver extends Driver {
  readonly app: CancellableApp<ClientApp>;
  readonly agent: ReturnType<ClientApp["connect"]>["agent"];
}

export function embeddedDriver(
  agent: AgentCommand,
  env: NodeJS.ProcessEnv,
  cwd: string,
  options: WithCancellationOptions = {},
): EmbeddedDriver {
  const dialogs: Dialog[] = [];
  const seen: Driver["seen"] = [];
  const errors: string[] = [];
  // The agent leads a process group of its own, so a careful client can stop what it started.
  const child = spawn(agent.command, agent.args, { stdio: ["pipe", "pipe", "pipe"], env, cwd, detached: true });
  child.stderr.resume();
  child.stdin.on("error", () => {});
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const app = withCancellation(acp.client({ name: "interop-editor" }), options)
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => new Promise((resolve) => {
      const dialog: Dialog = { params: params as unknown as Message, answer: (outcome) => resolve({ outcome }) };
      // A modal dialog closes itself when its request is cancelled.
      signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true });
      dialogs.push(dialog);
      driver.onDialog(dialog);
    }))
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.push({ kind: "update", message: { method: "session/update", params } as unknown as Message });
    });
  const connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    ),
  );
  const peer = connection.agent;
  const initialized = async (handshake: Handshake) => {
    await peer.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    if (handshake.authenticate !== undefined) await peer.request(acp.methods.agent.authenticate, handshake.authenticate);
  };
  const setUp = async (handshake: Handshake, sessionId: string) => {
    for (const { method, params } of handshake.sessionSetup?.(sessionId) ?? []) await peer.request(method, params);
  };
  const driver: EmbeddedDriver = {
    placement: "embedded",
    app,
    agent: peer,
    child,
    exited,
    dialogs,
    seen,
    onDialog: () => {},
    async open(handshake, dir) {
      await initialized(handshake);
      const { sessionId } = await peer.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      await setUp(handshake, sessionId);
      return sessionId;
    },
    async load(handshake, sessionId, dir) {
      await initialized(handshake);
      const result = await peer.request(acp.methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      await setUp(handshake, sessionId);
      return { result } as unknown as Message;
    },
    startPrompt(sessionId, text) {
      const stop = new AbortController();
      const answer = peer
        .request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }, { cancellationSignal: stop.signal })
        .then(
          (result) => {
            const message = { result } as unknown as Message;
            seen.push({ kind: "answer", message });
            return message;
          },
          (error: unknown) => {
            errors.push(String(error));
            return { error: String(error) } as Message;
          },
        );
      return { answer, cancelRequest: () => stop.abort() };
    },
    prompt(sessionId, text) {
      return driver.startPrompt(sessionId, text).answer;
    },
    cancel(sessionId) {
      void peer.notify(acp.methods.agent.session.cancel, { sessionId });
    },
    problems: () => errors,
    end() {
      child.stdin.end();
    },
  };
  return driver;
}

/** What a real-agent cell holds: the driver, its scripted model, its processes' marker, its home. */
export interface CellParts {
  driver: Driver;
  model: ModelServer;
  marker: string;
  home: string;
}

/** Ends a cell: stdin EOF, then the whole group (these agents may ignore EOF), its strays, the model, its home. */
export async function closeCell(cell: CellParts): Promise<void> {
  cell.driver.end();
  if ((await within(cell.driver.exited, 3000)) === undefined) {
    try {
      if (cell.driver.child.pid !== undefined) process.kill(-cell.driver.child.pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  killAll(cell.marker);
  await cell.model.close();
  rmSync(cell.home, { recursive: true, force: true });
}
