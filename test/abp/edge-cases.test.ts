/**
 * The spec's cancellation edge-case table, every row, over each transport, in real headless
 * Chromium against the bundled demo app. One table-driven body; the driver is the only difference.
 */
import assert from "node:assert/strict";
import { demo } from "./support/browser.js";
import { type Driver, openDriver, TRANSPORTS } from "./support/drivers.js";
import { useChromiumSuite } from "./support/suite.js";

const BIG = { width: 4096, height: 4096, rowsPerChunk: 2 };

/** Nothing left anywhere: the agent's job table and the page's records, controllers and timers. */
async function assertQuiet(d: Driver): Promise<void> {
  assert.equal(await d.agent("inFlight"), 0, "the agent holds no call");
  await demo.until(d.app, "stats.records === 0");
  const stats = await demo.stats(d.app);
  assert.deepEqual(
    { records: stats.records, queued: stats.queued, running: stats.running, controllers: stats.controllers,
      timers: stats.timers },
    { records: 0, queued: 0, running: 0, controllers: 0, timers: 0 },
  );
}

interface Row {
  scenario: string;
  run(d: Driver): Promise<void>;
}

const ROWS: Row[] = [
  {
    scenario: "cancel of a callId never seen → {cancelled: false, reason: 'Operation not found'}",
    async run(d) {
      await d.agent("initialize");
      assert.deepEqual(await d.agent("cancel", "no-such-call"), { callId: "no-such-call", cancelled: false, reason: "Operation not found" });
    },
  },
  {
    scenario: "cancel of a completed call → {cancelled: false, reason: 'Operation already completed'}",
    async run(d) {
      await d.agent("initialize");
      d.agent("start", "done", "echo", { n: 1 }, { callId: "done-1" });
      const outcome = await d.agent("outcome", "done");
      assert.deepEqual(outcome, { ok: true, result: { success: true, data: { n: 1 }, callId: "done-1" } });
      assert.deepEqual(await d.agent("cancel", "done-1"), { callId: "done-1", cancelled: false, reason: "Operation already completed" });
    },
  },
  {
    scenario: "cancel of a cancelled call, after its record is gone → {cancelled: true}",
    async run(d) {
      await d.agent("initialize");
      await d.agent("start", "r", "render", BIG, { callId: "render-1" });
      await demo.until(d.app, "counters.rows > 8");
      await d.agent("abort", "r");
      const outcome = await d.agent("outcome", "r");
      assert.deepEqual(outcome, { ok: true, result: { success: false, cancelled: true, callId: "render-1", cancelledBy: "abort" } });
      const [ack] = await d.agent("acks", "r", 1);
      assert.deepEqual(ack, { ack: { callId: "render-1", cancelled: true }, cause: "abort" });
      await assertQuiet(d);
      assert.deepEqual(await d.agent("cancel", "render-1"), { callId: "render-1", cancelled: true });
    },
  },
  {
    scenario: "repeated cancels of one call all answer {cancelled: true}",
    async run(d) {
      await d.agent("initialize");
      await d.agent("start", "w", "wait", {}, { callId: "wait-1" });
      await demo.until(d.app, "stats.running === 1");
      const acks = await Promise.all([d.agent("cancel", "wait-1"), d.agent("cancel", "wait-1"), d.agent("cancel", "wait-1", "again")]);
      assert.deepEqual(acks, Array(3).fill({ callId: "wait-1", cancelled: true }));
      const outcome = await d.agent("outcome", "w");
      assert.deepEqual(outcome, { ok: true, result: { success: false, cancelled: true, callId: "wait-1", cancelledBy: "cancel" } });
      assert.deepEqual(await d.agent("cancel", "wait-1"), { callId: "wait-1", cancelled: true });
      await assertQuiet(d);
      assert.equal((await demo.counters(d.app)).abortListeners, 0);
    },
  },
  {
    scenario: "the call completes while its cancel is in flight → the normal result, and {cancelled: false}",
    async run(d) {
      await d.agent("initialize");
      // The abort follows the call at once; the app finishes echo before the cancel reaches it.
      await d.agent("start", "race", "echo", { n: 2 }, { callId: "race-1", abortAtOnce: true });
      const outcome = await d.agent("outcome", "race");
      assert.deepEqual(outcome, { ok: true, result: { success: true, data: { n: 2 }, callId: "race-1" } });
      const [ack] = await d.agent("acks", "race", 1);
      assert.deepEqual(ack, { ack: { callId: "race-1", cancelled: false, reason: "Operation already completed" }, cause: "abort" });
      await assertQuiet(d);
    },
  },
  {
    scenario: "no active session (before initialize, after shutdown) → NOT_INITIALIZED",
    async run(d) {
      const before = await d.agent("cancel", "any");
      assert.deepEqual(before, {
        callId: "any",
        cancelled: false,
        error: { code: "NOT_INITIALIZED", message: "no active session: call initialize first", retryable: false },
      });
      await d.agent("start", "c", "echo", {}, { callId: "c-1" });
      assert.deepEqual(await d.agent("outcome", "c"), {
        ok: true,
        result: { success: false, error: { code: "NOT_INITIALIZED", message: "no active session: call initialize first", retryable: false }, callId: "c-1" },
      });
      await d.agent("initialize");
      await d.agent("shutdown");
      const after = await d.agent("cancel", "any");
      assert.equal(after.error?.code, "NOT_INITIALIZED");
      assert.equal(after.cancelled, false);
    },
  },
  {
    scenario: "a cancel before the operation starts skips it → {cancelled: true}, the handler never runs",
    async run(d) {
      await d.agent("initialize");
      // maxConcurrent is 2: two waiting calls fill the slots, the render waits in line.
      await d.agent("start", "a", "wait", {}, { callId: "slot-a" });
      await d.agent("start", "b", "wait", {}, { callId: "slot-b" });
      await d.agent("start", "queued", "render", BIG, { callId: "queued-1" });
      await demo.until(d.app, "stats.running === 2 && stats.queued === 1");
      assert.deepEqual(await d.agent("cancel", "queued-1"), { callId: "queued-1", cancelled: true });
      assert.deepEqual(await d.agent("outcome", "queued"), {
        ok: true,
        result: { success: false, cancelled: true, callId: "queued-1", cancelledBy: "cancel" },
      });
      const stats = await demo.stats(d.app);
      assert.equal(stats.skipped, 1);
      assert.equal(stats.started, 2, "the render never started");
      assert.equal((await demo.counters(d.app)).renders, 0);
      await d.agent("abort", "a");
      await d.agent("abort", "b");
      await d.agent("outcome", "a");
      await d.agent("outcome", "b");
      await assertQuiet(d);
    },
  },
  {
    scenario: "a timeout cancels the call exactly as an abort does → {cancelled: true}",
    async run(d) {
      await d.agent("initialize");
      await d.agent("start", "t", "render", BIG, { callId: "timed-1", timeout: 200 });
      const outcome = await d.agent("outcome", "t");
      assert.deepEqual(outcome, { ok: true, result: { success: false, cancelled: true, callId: "timed-1", cancelledBy: "timeout" } });
      const [ack] = await d.agent("acks", "t", 1);
      assert.deepEqual(ack, { ack: { callId: "timed-1", cancelled: true }, cause: "timeout" });
      await assertQuiet(d);
      assert.equal((await demo.counters(d.app)).renderAborts, 1, "the render saw its signal abort");
    },
  },
  {
    scenario: "a cancel in the middle of a render stops the page's own progress counter",
    async run(d) {
      await d.agent("initialize");
      await d.agent("start", "r", "render", BIG, { callId: "mid-1" });
      await demo.until(d.app, "counters.rows > 64");
      await d.agent("abort", "r");
      const outcome = await d.agent("outcome", "r");
      assert.equal(outcome.ok && outcome.result.cancelled, true);
      await assertQuiet(d);
      const stopped = (await demo.counters(d.app)).rows;
      assert.ok(stopped < BIG.height, `stopped part way (${stopped} of ${BIG.height} rows)`);
      // Give the page many turns of its event loop: the counter does not move again.
      await d.app.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
      const later = await demo.counters(d.app);
      assert.equal(later.rows, stopped, "no row rendered after the cancel was answered");
      assert.equal(later.renderAborts, 1);
    },
  },
];

describe("ABP edge-case table, in headless Chromium", function () {
  this.timeout(30_000);
  const suite = useChromiumSuite();

  for (const transport of TRANSPORTS) {
    describe(`over ${transport}`, () => {
      let d: Driver;
      beforeEach(async () => {
        d = await openDriver(transport, suite.browser, suite.origins);
      });
      afterEach(async () => {
        await d.close();
      });
      for (const row of ROWS) it(row.scenario, () => row.run(d));
    });
  }
});
