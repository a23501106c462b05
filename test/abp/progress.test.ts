/**
 * Progress from a handler reaches the agent's onProgress over the envelope transports, and stops
 * with the call, in headless Chromium.
 */
import assert from "node:assert/strict";
import { demo } from "./support/browser.js";
import { type Driver, openDriver } from "./support/drivers.js";
import { useChromiumSuite } from "./support/suite.js";

describe("ABP progress, in headless Chromium", function () {
  this.timeout(30_000);
  const suite = useChromiumSuite();

  for (const transport of ["postMessage", "websocket"] as const) {
    it(`over ${transport}: a render's progress arrives in order, and none after the cancel`, async () => {
      const d: Driver = await openDriver(transport, suite.browser, suite.origins);
      try {
        await d.agent("initialize");
        await d.agent("start", "r", "render", { width: 1024, height: 4096, rowsPerChunk: 8 }, { progressToken: "render-progress" });
        await demo.until(d.app, "counters.rows > 64");
        await d.agent("abort", "r");
        const outcome = await d.agent("outcome", "r");
        assert.equal(outcome.ok && outcome.result.cancelled, true);
        const progress = await d.agent("progress", "r");
        assert.ok(progress.length >= 8, `progress arrived (${progress.length} reports)`);
        assert.deepEqual(progress, [...progress].sort((a, b) => a - b), "in order");
        const rows = (await demo.counters(d.app)).rows;
        assert.ok((progress.at(-1) ?? 0) <= rows, "no report beyond the rows rendered");
        await d.app.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
        assert.equal((await d.agent("progress", "r")).length, progress.length, "no progress after the call ended");
      } finally {
        await d.close();
      }
    });
  }
});
