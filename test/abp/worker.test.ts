/** postMessage to an app in a dedicated worker, in headless Chromium. */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { launchChromium, type Origins, startOrigins } from "./support/browser.js";

describe("ABP over postMessage to a dedicated worker, in headless Chromium", function () {
  this.timeout(30_000);
  let browser: Browser;
  let origins: Origins;
  let page: Page;
  before(async () => {
    browser = await launchChromium();
    origins = await startOrigins();
    page = await browser.newPage();
    // The agent page (no app frame needed): it has the import map for the agent side's zod.
    await page.goto(`${origins.agent.origin}/test/abp/pages/agent.html?app=about:blank`);
  });
  after(async () => {
    await browser?.close();
    await origins?.close();
  });

  it("an abort stops the worker's operation and is acknowledged; the worker holds nothing after", async () => {
    const report = await page.evaluate(async () => {
      const agentSide = "/src/abp/index.js"; // as the page serves it
      const { AbpClient, postMessageTransport } = (await import(agentSide)) as typeof import("../../src/abp/index.js");
      const worker = new Worker("/test/abp/pages/worker-app.js", { type: "module" });
      const client = new AbpClient(postMessageTransport({ worker }));
      await client.initialize();
      const stop = new AbortController();
      let ack: unknown;
      const call = client.call("count", {}, { signal: stop.signal, onCancelAcknowledged: (a: unknown) => (ack = a) });
      // Let it count (seen counting, not assumed after a sleep), then cancel.
      while (((await client.call("counted")).data as { counted: number }).counted === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      stop.abort();
      const result = await call;
      const first = (await client.call("counted")).data as { counted: number };
      await new Promise((resolve) => setTimeout(resolve, 100));
      const later = (await client.call("counted")).data as { counted: number; stats: Record<string, number> };
      await client.close();
      worker.terminate();
      return { result, ack, first: first.counted, later: later.counted, stats: later.stats };
    });
    const { callId, ...rest } = report.result as { callId: string };
    assert.deepEqual(rest, { success: false, cancelled: true, cancelledBy: "abort" });
    assert.deepEqual(report.ack, { callId, cancelled: true });
    assert.ok(report.first > 0, "the worker counted");
    assert.equal(report.later, report.first, "and stopped counting at the cancel");
    assert.equal(report.stats.records, 1, "only the call asking for the stats is in flight");
    assert.equal(report.stats.controllers, 0);
  });
});
