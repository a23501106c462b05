/**
 * The app's dispatch, in Node (AbpApp needs nothing from a page): a capability that returns a
 * plain value is answered at once, exactly once, and the bookkeeping still empties.
 */
import assert from "node:assert/strict";
import { AbpApp } from "../../src/abp/app/index.js";
import type { CallResult } from "../../src/abp/schemas.js";

function newApp(maxConcurrent?: number) {
  const app = new AbpApp({
    app: { id: "unit", name: "unit", version: "1" },
    capabilities: {
      echo: (params) => params,
      nothing: () => undefined,
      fails: () => {
        throw new Error("no");
      },
      later: (_params, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve("late"), { once: true })),
    },
    ...(maxConcurrent === undefined ? {} : { maxConcurrent }),
  });
  app.initialize({ agent: { name: "test", version: "1" }, protocolVersion: "0.1" });
  return app;
}

describe("ABP app dispatch", () => {
  it("answers a capability that returns a value (or throws) before dispatch returns, once", () => {
    const app = newApp();
    const answers: CallResult[] = [];
    app.dispatch("echo", { a: 1 }, { callId: "e1" }, undefined, (result) => answers.push(result));
    app.dispatch("nothing", {}, { callId: "n1" }, undefined, (result) => answers.push(result));
    app.dispatch("fails", {}, { callId: "f1" }, undefined, (result) => answers.push(result));
    assert.deepEqual(answers, [
      { success: true, data: { a: 1 } },
      { success: true },
      { success: false, error: { code: "HANDLER_FAILED", message: "no", retryable: false } },
    ]);
    assert.equal(app.cancel("e1").reason, "Operation already completed");
    assert.deepEqual({ ...app.stats(), remembered: 0, started: 0 }, {
      records: 0, queued: 0, running: 0, controllers: 0, timers: 0, remembered: 0, started: 0, skipped: 0,
    });
  });

  it("runs a long queue of quick calls behind a slow one without deepening the stack", async () => {
    const app = newApp(1);
    let answered = 0;
    app.dispatch("later", {}, { callId: "slow" }, undefined, () => answered++);
    for (let i = 0; i < 20_000; i++) app.dispatch("echo", { i }, { callId: `q${i}` }, undefined, () => answered++);
    assert.equal(app.stats().queued, 20_000);
    assert.equal(app.cancel("slow").cancelled, true);
    // Its handler returns on the abort, which frees the slot: the whole queue runs in one go.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, 20_001);
    assert.equal(app.stats().records, 0);
    assert.equal(app.stats().queued, 0);
  });

  it("answers a cancelled call once, after the cancel's own acknowledgement", async () => {
    const app = newApp();
    const events: string[] = [];
    app.dispatch("later", {}, { callId: "c1" }, undefined, (result) => events.push(`answer ${JSON.stringify(result)}`));
    const ack = app.cancel("c1");
    events.push(`ack ${ack.cancelled}`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ["ack true", `answer ${JSON.stringify({ success: false, cancelled: true })}`]);
    assert.equal(app.stats().records, 0);
  });
});
