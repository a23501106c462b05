/**
 * A real @a2a-js/sdk server on loopback for the A2A tests: the SDK's Express JSON-RPC handler
 * with its v0.3 compat layer on, a DefaultRequestHandler, and a long-running executor that
 * counts its own progress. The handler the transport sees can be swapped (unguarded or
 * guarded) between tests; every cancel that reaches the server is recorded at the HTTP level.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentCard, Task } from "@a2a-js/sdk";
import {
  type A2ARequestHandler,
  DefaultRequestHandler,
  InMemoryTaskStore,
  ServerCallContext,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";
import { CancellableExecutor } from "../../src/a2a/index.js";
import { Job, jobOf } from "../../src/core/index.js";
import { eventually } from "../support/wire-assertions.js";

export const SERVER_CARD_NAME = "Story teller";

/** What the executor's work did, per task: its own progress counter and whether it returned. */
export class WorkLog {
  readonly progress = new Map<string, number>();
  readonly returned = new Set<string>();
  readonly aborted = new Set<string>();
  /** What a `leave` task started under its job (`jobOf(signal)`) and never settled. */
  readonly leftPending = new Map<string, Job>();
}

export interface A2aServer {
  /** The JSON-RPC endpoint (v1.0, and v0.3 through the compat layer). */
  url: string;
  baseUrl: string;
  /** The HTTP+JSON (REST) endpoint, v1.0. */
  restUrl: string;
  card: AgentCard;
  inner: A2ARequestHandler;
  executor: CancellableExecutor;
  work: WorkLog;
  /** JSON-RPC methods of every cancel that reached the server over HTTP. */
  cancelsReceived: { method: string; taskId: unknown; version: string | undefined }[];
  /** The handler the transport uses: the inner one, or a guarded wrapper of it. */
  use(handler: A2ARequestHandler): void;
  /** Cancels every task still running, directly on the inner handler (test clean-up). */
  cancelLeftovers(): Promise<void>;
  close(): Promise<void>;
}

/** Waits `ms`, or less when `signal` aborts (work that listens to its signal stops at once). */
const step = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

export async function startA2aServer(options: { stepMs?: number; graceMs?: number } = {}): Promise<A2aServer> {
  const stepMs = options.stepMs ?? 5;
  const work = new WorkLog();
  const executor = new CancellableExecutor(
    async (context, eventBus, signal) => {
      const { taskId, contextId } = context;
      const first = context.userMessage.parts[0]?.content;
      const [, mode, count] = /^(run|stubborn|leave) (\d+)$/.exec(first?.$case === "text" ? first.value : "") ?? [];
      const steps = Number(count ?? 100);
      // A stubborn task never looks at its signal: only the executor's grace answers its cancel.
      const stubborn = mode === "stubborn";
      if (mode === "leave") work.leftPending.set(taskId, new Job("side work", jobOf(signal)));
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
      work.progress.set(taskId, 0);
      try {
        for (let i = 0; i < steps; i++) {
          await step(stepMs, stubborn ? undefined : signal);
          if (signal.aborted && !stubborn) {
            work.aborted.add(taskId);
            return;
          }
          work.progress.set(taskId, (work.progress.get(taskId) ?? 0) + 1);
        }
        eventBus.publish({
          kind: "statusUpdate",
          data: {
            taskId,
            contextId,
            status: { state: 3, message: undefined, timestamp: new Date().toISOString() },
            metadata: {},
          },
        });
      } finally {
        work.returned.add(taskId);
      }
    },
    options.graceMs !== undefined ? { graceMs: options.graceMs } : {},
  );
  const card: AgentCard = {
    name: SERVER_CARD_NAME,
    description: "Writes very long stories.",
    version: "1.0.0",
    supportedInterfaces: [],
    provider: { organization: "AzureAIFoundry", url: "https://ai.azure.com" },
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    signatures: [],
  };
  const inner = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  let current: A2ARequestHandler = inner;
  const switching = new Proxy(inner, {
    get(_target, property) {
      const value: unknown = Reflect.get(current, property, current);
      return typeof value === "function" ? value.bind(current) : value;
    },
  }) as A2ARequestHandler;

  const cancelsReceived: A2aServer["cancelsReceived"] = [];
  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    const body = req.body as { method?: unknown; params?: { id?: unknown } } | undefined;
    if (body?.method === "tasks/cancel" || body?.method === "CancelTask") {
      cancelsReceived.push({ method: body.method, taskId: body.params?.id, version: req.header("A2A-Version") });
    }
    next();
  });
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: inner }));
  app.use(
    "/a2a",
    jsonRpcHandler({
      requestHandler: switching,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }),
  );
  app.use("/rest", restHandler({ requestHandler: switching, userBuilder: UserBuilder.noAuthentication }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const url = `${baseUrl}/a2a`;
  card.supportedInterfaces.push(
    { url, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
    { url, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" },
    { url: `${baseUrl}/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0", tenant: "" },
  );
  return {
    url,
    baseUrl,
    restUrl: `${baseUrl}/rest`,
    card,
    inner,
    executor,
    work,
    cancelsReceived,
    use(handler) {
      current = handler;
    },
    async cancelLeftovers() {
      const { tasks } = await inner.listTasks({ tenant: "", pageSize: 100 } as never, new ServerCallContext());
      await Promise.all(
        tasks
          .filter((task: Task) => task.status?.state === 2)
          .map((task: Task) => inner.cancelTask({ tenant: "", id: task.id, metadata: {} }, new ServerCallContext())),
      );
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * Between tests: the transport back on the inner handler, every leftover task cancelled and its
 * work returned, and the record of received cancels emptied.
 */
export async function resetA2aServer(server: A2aServer): Promise<void> {
  server.use(server.inner);
  await server.cancelLeftovers();
  await eventually(() => (server.executor.running === 0 || undefined), "every task's work returned");
  server.cancelsReceived.length = 0;
}
