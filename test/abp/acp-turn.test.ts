/**
 * An embedded ACP agent (SDK 2.4.0 + withCancellation, a real subprocess over stdio) whose prompt
 * handler made an ABP call into a page in headless Chromium: session/cancel from the editor stops
 * the page's operation.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import type { Browser, Page } from "playwright-core";
import { harness, openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { demo, demoReady, launchChromium, type Origins, startOrigins } from "./support/browser.js";

describe("ABP under an ACP turn, in headless Chromium", function () {
  this.timeout(30_000);
  let browser: Browser;
  let origins: Origins;
  let page: Page | undefined;
  before(async () => {
    browser = await launchChromium();
    origins = await startOrigins();
  });
  after(async () => {
    await page?.close();
    await browser?.close();
    await origins?.close();
  });

  it("session/cancel from the editor stops the render in the page, and the turn ends cancelled", async () => {
    const updates: string[] = [];
    const editor = acp.client({ name: "test-editor" }).onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") {
        updates.push(params.update.content.text);
      }
    });
    const h = harness(editor, ["--app-origin", origins.app.origin], "abp-agent");
    const endpoint = await eventually(() => /abp endpoint (\S+)/.exec(h.peer.stderr())?.[1], "the agent's ABP endpoint");
    page = await browser.newPage();
    await page.goto(`${origins.app.origin}/examples/abp/index.html?transport=websocket&ws=${encodeURIComponent(endpoint)}`);
    await demoReady(page);
    await eventually(() => (/abp session/.test(h.peer.stderr()) ? true : undefined), "the agent's ABP session");
    const app = page.mainFrame();

    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "render"));
      await demo.until(app, "counters.rows > 32");
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });

      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      await eventually(() => (updates.length > 0 ? true : undefined), "the handler's report");
      // The handler passed ctx.signal: its abort cancelled the call; the callId was generated.
      const { callId, ...report } = JSON.parse(updates[0] ?? "{}") as { callId: string };
      assert.deepEqual(report, { success: false, cancelled: true, cancelledBy: "abort" });
      assert.match(callId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      await demo.until(app, "stats.records === 0");
      const stopped = await demo.counters(app);
      await app.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
      const later = await demo.counters(app);
      assert.equal(later.rows, stopped.rows, "the page rendered nothing after the cancel");
      assert.ok(stopped.rows < 4096, `the render stopped part way (${stopped.rows} of 4096 rows)`);
      assert.equal(later.renderAborts, 1, "the render saw its signal abort");
      assert.deepEqual(await agent.request("_test/abp_in_flight", {}), { calls: 0 });
    });
  });
});
