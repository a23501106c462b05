import assert from "node:assert/strict";
import { CancellableExecutor } from "../../src/a2a/index.js";
import { eventually } from "../support/wire-assertions.js";
import { cancelOf, sdkClient, startTask, untilFinal } from "./a2a-clients.js";
import { type A2aServer, startA2aServer } from "./a2a-server.js";

describe("CancellableExecutor: work that ignores its signal is answered after the grace, exactly once", () => {
  let server: A2aServer;
  before(async () => {
    server = await startA2aServer({ graceMs: 100 });
  });
  after(() => server.close());

  it("the cancel is answered canceled after the grace; the late completion is dropped; nothing is left running", async () => {
    const client = await sdkClient(server, "1.0");
    const steps = 80;
    const task = await startTask(client, steps, "stubborn");
    await eventually(() => ((server.work.progress.get(task.id) ?? 0) > 0 || undefined), "work started");

    const answer = await cancelOf(client, task.id);
    assert.equal(answer.status?.state, 5);
    assert.ok(!server.work.returned.has(task.id), "the stubborn work is still running when the grace answers");

    await eventually(() => server.work.returned.has(task.id) || undefined, "the stubborn work returned");
    assert.equal(server.work.progress.get(task.id), steps, "it ran every step (it never looked at its signal)");
    assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 5, "still canceled: its completion was dropped");
    assert.equal(server.executor.running, 0);
  });

  it("work that returns leaving a job pending under jobOf(signal): that job is cancelled (internal) when the task settles (issue 36)", async () => {
    const client = await sdkClient(server, "1.0");
    const task = await startTask(client, 2, "leave");
    assert.equal((await untilFinal(client, task.id)).status?.state, 3, "completed");
    await eventually(() => server.work.returned.has(task.id) || undefined, "the work returned");
    await eventually(() => server.executor.running === 0 || undefined, "the task settled");
    const left = server.work.leftPending.get(task.id);
    assert.equal(left?.parent?.isSettled, true, "it hung under the task's job");
    assert.equal(left?.reason, "internal", "cancelled when the task settled, not orphaned");
  });

  it("refuses a grace setTimeout cannot wait (negative, not finite, above 2^31-1 ms) with a RangeError naming it", () => {
    for (const graceMs of [-1, Number.NaN, 2 ** 31]) {
      assert.throws(() => new CancellableExecutor(async () => {}, { graceMs }), /grace period must be a finite number/);
    }
  });
});
