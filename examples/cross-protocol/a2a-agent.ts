/**
 * The demo's remote A2A agent (@a2a-js/sdk on express, loopback) behind the AOS guardian: its
 * request handler is wrapped by `guardCancelTasks`, so every cancel is put to the guardian
 * before the executor hears of it, and the executor (`CancellableExecutor`) gives the task's
 * work an AbortSignal. A task "write N" writes a paragraph every 10 ms; "stubborn N" never
 * looks at its signal (the executor's grace answers its cancel).
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentCard } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore, ServerCallContext } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";
import { CancellableExecutor, GuardianClient, guardCancelTasks, startGuardian } from "../../src/a2a/index.js";
import { type CrossEvent, message, note } from "./events.js";

export interface A2aAgent {
  /** The base URL clients create their client from (the agent card is under it). */
  baseUrl: string;
  guardianUrl: string;
  executor: CancellableExecutor;
  /** Paragraphs written per task. */
  progress: Map<string, number>;
  /** The task's state as the server's store has it (A2A v1.0 numbers: 2 working, 5 canceled). */
  state(taskId: string): Promise<number | undefined>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startA2aAgent(onEvent: (event: CrossEvent) => void, options: { graceMs?: number } = {}): Promise<A2aAgent> {
  const guardian = await startGuardian({
    rules: { default: "allow" },
    // The agent's client hook asks as the agent; the A2A agent's server hook asks for an anonymous caller.
    log: (entry) => {
      const asker = entry.from === "anonymous" ? "a2a-agent" : "agent";
      onEvent(message("AOS", asker, "guardian", `may ${asker === "agent" ? "I" : "they"} cancel ${entry.taskId.slice(0, 8)}? ${entry.decision}`));
    },
  });
  const progress = new Map<string, number>();
  let closed = false;
  const executor = new CancellableExecutor(
    async (context, eventBus, signal) => {
      const { taskId, contextId } = context;
      const first = context.userMessage.parts[0]?.content;
      const [, mode = "write", count = "100"] = /^(write|stubborn) (\d+)$/.exec(first?.$case === "text" ? first.value : "") ?? [];
      eventBus.publish({
        kind: "task",
        data: {
          id: taskId,
          contextId,
          status: { state: 2, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [context.userMessage],
          metadata: {},
        },
      });
      onEvent(note("A2A", "a2a-agent", `task ${taskId.slice(0, 8)} working (${mode})`));
      progress.set(taskId, 0);
      // `closed`: even stubborn work ends when the demo shuts the agent down.
      for (let i = 0; i < Number(count) && !closed; i++) {
        if (signal.aborted && mode !== "stubborn") {
          onEvent(note("A2A", "a2a-agent", `task ${taskId.slice(0, 8)} work stopped after ${progress.get(taskId) ?? 0} paragraphs`));
          return;
        }
        await sleep(10);
        progress.set(taskId, (progress.get(taskId) ?? 0) + 1);
      }
      eventBus.publish({
        kind: "statusUpdate",
        data: { taskId, contextId, status: { state: 3, message: undefined, timestamp: new Date().toISOString() }, metadata: {} },
      });
    },
    options.graceMs === undefined ? {} : { graceMs: options.graceMs },
  );
  const card: AgentCard = {
    name: "Story writer",
    description: "Writes long stories on request.",
    version: "1.0.0",
    supportedInterfaces: [],
    provider: { organization: "acp-cancel demo", url: "https://example.invalid" },
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    signatures: [],
  };
  const inner = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const guarded = guardCancelTasks(inner, { guardian: new GuardianClient({ url: guardian.url }) });
  const app = express();
  app.use(express.json({ limit: "64kb" }));
  app.use((req, _res, next) => {
    const body = req.body as { method?: unknown; params?: { id?: unknown } } | undefined;
    if (body?.method === "tasks/cancel" || body?.method === "CancelTask") {
      onEvent(message("A2A", "agent", "a2a-agent", `${body.method} ${String(body.params?.id).slice(0, 8)}`));
    }
    next();
  });
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: inner }));
  app.use("/a2a", jsonRpcHandler({ requestHandler: guarded, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  card.supportedInterfaces.push(
    { url: `${baseUrl}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
    { url: `${baseUrl}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" },
  );
  return {
    baseUrl,
    guardianUrl: guardian.url,
    executor,
    progress,
    async state(taskId) {
      const task = await inner.getTask({ tenant: "", id: taskId, historyLength: 0 }, new ServerCallContext()).catch(() => undefined);
      return task?.status?.state === undefined ? undefined : Number(task.status.state);
    },
    async close() {
      closed = true;
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await guardian.close();
    },
  };
}
