/**
 * One replica of an A2A service, as a real process: the SDK's Express JSON-RPC server, its
 * DefaultRequestHandler on the SDK's DatabaseTaskStore (Kysely over PostgreSQL), a
 * CancellableExecutor claiming its tasks on a cancel bus, and the replica hook routing cancels
 * for tasks that run elsewhere. The work publishes one artifact per step.
 *
 * Environment: BACKEND (postgres|redis), BUS_URL, DB_URL, REPLICA, PUBLIC_URL (optional: the
 * URL the card names, e.g. a load balancer's), SWEEP_MS (optional: this replica sweeps for
 * orphaned tasks), LEASE_MS, CONFIRM_MS, STEP_MS (optional: the bus's lease, the hook's bound,
 * a step's time). Prints "listening <port>" when ready.
 * GET /work answers what the work did per task (the test reads it, never the store alone);
 * GET /sweeps what the orphan sweep reported (its `onSweep` events, errors as their message).
 */
import type { AddressInfo } from "node:net";
import type { AgentCard } from "@a2a-js/sdk";
import { DefaultRequestHandler } from "@a2a-js/sdk/server";
import { DatabaseTaskStore } from "@a2a-js/sdk/server/database";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { CancellableExecutor, routeCancelsToOwner } from "../../src/a2a/index.js";
import { postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`a2a-replica: ${name} is not set`);
  return value;
};
const replica = env("REPLICA");
const open = env("BACKEND") === "postgres" ? postgresCancelBus : redisCancelBus;
const bus = await open(env("BUS_URL"), { replica, leaseMs: Number(process.env.LEASE_MS ?? 3000) });
const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: env("DB_URL"), max: 4 }) }) });
const taskStore = new DatabaseTaskStore(db);

interface WorkRecord {
  steps: number;
  aborted: boolean;
  returned: boolean;
}
const work = new Map<string, WorkRecord>();
const stepMs = Number(process.env.STEP_MS ?? 20);

const executor = new CancellableExecutor(
  async (context, eventBus, signal) => {
    const { taskId, contextId } = context;
    const record: WorkRecord = { steps: 0, aborted: false, returned: false };
    work.set(taskId, record);
    const first = context.userMessage.parts[0]?.content;
    const text = first?.$case === "text" ? first.value : "";
    const steps = Number(/^run (\d+)$/.exec(text)?.[1] ?? 100);
    const now = () => new Date().toISOString();
    if (text === "ask") {
      // Returns at once, waiting for input (input-required): nothing of it runs any more.
      eventBus.publish({
        kind: "task",
        data: {
          id: taskId, contextId, status: { state: 6, message: undefined, timestamp: now() },
          artifacts: [], history: [context.userMessage], metadata: { replica },
        },
      });
      record.returned = true;
      return;
    }
    eventBus.publish({
      kind: "task",
      data: {
        id: taskId, contextId, status: { state: 2, message: undefined, timestamp: now() },
        artifacts: [], history: [context.userMessage], metadata: { replica },
      },
    });
    try {
      for (let i = 0; i < steps; i++) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, stepMs);
          signal.addEventListener("abort", done, { once: true });
        });
        if (signal.aborted) {
          record.aborted = true;
          return;
        }
        record.steps++;
        eventBus.publish({
          kind: "artifactUpdate",
          data: {
            taskId, contextId, append: false, lastChunk: true, metadata: undefined,
            artifact: {
              artifactId: `step-${i}`, name: `step ${i}`, description: "", metadata: undefined, extensions: [],
              parts: [{ content: { $case: "text", value: `step ${i} on ${replica}` }, metadata: undefined, filename: "", mediaType: "text/plain" }],
            },
          },
        });
      }
      eventBus.publish({
        kind: "statusUpdate",
        data: { taskId, contextId, status: { state: 3, message: undefined, timestamp: now() }, metadata: {} },
      });
    } finally {
      record.returned = true;
    }
  },
  { replicas: bus, graceMs: 2000 },
);

const card: AgentCard = {
  name: "Replicated story teller",
  description: "Writes long stories on any of its replicas.",
  version: "1.0.0",
  supportedInterfaces: [],
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
  signatures: [],
} as unknown as AgentCard;
const inner = new DefaultRequestHandler(card, taskStore, executor);
const sweeps: unknown[] = [];
const sweepMs = process.env.SWEEP_MS;
const onSweep = (event: object) => {
  sweeps.push("error" in event && event.error instanceof Error ? { ...event, error: event.error.message } : event);
};
const sweep = sweepMs === undefined ? {} : { sweepMs: Number(sweepMs), onSweep };
const confirmMs = Number(process.env.CONFIRM_MS ?? 3000);
const handler = routeCancelsToOwner(inner, { executor, replicas: bus, taskStore, confirmMs, ...sweep });

const app = express();
app.use(express.json());
app.get("/work", (_req, res) => {
  res.json({ replica, work: Object.fromEntries(work) });
});
app.get("/sweeps", (_req, res) => {
  res.json({ replica, sweeps });
});
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: inner }));
app.use("/a2a", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  const url = `${process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}`}/a2a`;
  card.supportedInterfaces.push({ url, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" });
  process.stdout.write(`listening ${port}\n`);
});

const shutdown = async () => {
  server.close();
  server.closeAllConnections();
  await bus.close();
  // The store's pool is left to the exit: tasks still running would log writes to a destroyed driver.
  process.exit(0);
};
process.on("SIGTERM", () => void shutdown());
