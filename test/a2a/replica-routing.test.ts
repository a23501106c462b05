/**
 * Issue 35 items 1-2, in process: what routeCancelsToOwner writes after the bus's verdict. The
 * store and the handler are the SDK's; the bus is the `ReplicaCancels` port, answering as a real
 * bus does (test/replicas runs the same rules on real PostgreSQL and Redis).
 */
import assert from "node:assert/strict";
import type { AgentCard, Task } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore, ServerCallContext } from "@a2a-js/sdk/server";
import { CancellableExecutor, routeCancelsToOwner } from "../../src/a2a/index.js";
import type { ReplicaVerdict } from "../../src/a2a/server-hook.js";

const card = {
  name: "routing", description: "", version: "1.0.0", supportedInterfaces: [],
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {}, securityRequirements: [], defaultInputModes: [], defaultOutputModes: [], skills: [], signatures: [],
} as unknown as AgentCard;

const text = (value: string, role: number) => ({
  role, messageId: `m-${value}`, taskId: "t1", contextId: "c1", metadata: {}, extensions: [], referenceTaskIds: [],
  parts: [{ content: { $case: "text" as const, value }, mediaType: "text/plain", filename: "", metadata: {} }],
});

function task(state: number, artifacts: number): Task {
  return {
    id: "t1", contextId: "c1", metadata: {}, history: [text("run", 1)],
    status: { state, message: undefined, timestamp: new Date().toISOString() },
    artifacts: Array.from({ length: artifacts }, (_, i) => ({
      artifactId: `a${i}`, name: "", description: "", parts: [], metadata: undefined, extensions: [],
    })),
  } as unknown as Task;
}

/** A handler whose cancels go over `cancel`, on a store holding t1 `working` with one artifact. */
async function routed(cancel: (store: InMemoryTaskStore) => Promise<ReplicaVerdict>) {
  const store = new InMemoryTaskStore();
  const context = new ServerCallContext();
  await store.save(task(2, 1), context);
  const executor = new CancellableExecutor(async () => undefined);
  const handler = routeCancelsToOwner(new DefaultRequestHandler(card, store, executor), {
    executor, taskStore: store, confirmMs: 200, replicas: { cancel: () => cancel(store) },
  });
  const answer = await handler.cancelTask({ tenant: "", id: "t1", metadata: {} }, context).then(
    (done) => done,
    (error: unknown) => error as Error,
  );
  return { answer, stored: await store.load("t1", context) };
}

describe("routeCancelsToOwner: what a cancel writes after the bus's verdict (issue 35)", () => {
  it("no owner because the work just returned: nothing is written, the owner's completed task stays whole", async () => {
    const { answer, stored } = await routed(async (store) => {
      // While the cancel waited, the owner's work ended and its replica saved it.
      await store.save(task(3, 5), new ServerCallContext());
      return { kind: "no-owner", settled: true };
    });
    assert.match((answer as Error).message, /already ended in state 3/);
    assert.deepEqual([stored?.status?.state, stored?.artifacts.length, stored?.history.length], [3, 5, 1]);
  });

  it("an abandoned task is marked failed from the task as it is now: artifacts saved meanwhile and the history stay", async () => {
    const { answer, stored } = await routed(async (store) => {
      await store.save(task(2, 4), new ServerCallContext());
      return { kind: "no-owner", settled: true, abandonedBy: "replica-a" };
    });
    assert.match((answer as Error).message, /\(replica-a\) is gone .* marked failed/);
    assert.deepEqual([stored?.status?.state, stored?.artifacts.length, stored?.history.length], [4, 4, 1]);
  });
});
