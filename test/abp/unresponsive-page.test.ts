/**
 * ABP over Playwright with an app that never answers (its `window.abp` methods never settle, as a
 * hung page's): closing the client must not wait on it.
 */
import assert from "node:assert/strict";
import { AbpClient, playwrightTransport } from "../../src/abp/index.js";
import { useChromiumSuite } from "./support/suite.js";

/** A `window.abp` whose every method returns a promise that never settles. */
const NEVER_ANSWERS = `<script>
  const never = () => new Promise(() => {});
  window.abp = { initialize: never, call: never, cancel: never, shutdown: never };
</script>`;

describe("ABP over Playwright: an app that never answers, in headless Chromium", function () {
  this.timeout(20_000); // a hang fails here
  const suite = useChromiumSuite();

  /** Runs `test` with a client (grace 200 ms) on a fresh page that never answers, closed after. */
  async function onDeafPage(test: (client: AbpClient) => Promise<void>): Promise<void> {
    const context = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      await page.setContent(NEVER_ANSWERS);
      await test(new AbpClient(playwrightTransport(page), { graceMs: 200 }));
    } finally {
      await context.close();
    }
  }

  it("close() gives the shutdown the grace period, then closes; the pending call settles cancelled by shutdown", () =>
    onDeafPage(async (client) => {
      const call = client.call("render", {}, { callId: "c1" });
      await client.close();
      assert.deepEqual(await call, { success: false, cancelled: true, callId: "c1", cancelledBy: "shutdown" });
      assert.equal(client.calls.size, 0);
      assert.notEqual(client.transport.closedWith, undefined, "the transport is closed");
    }));

  it("shutdown() without the app's acknowledgement rejects after the grace period, naming why", () =>
    onDeafPage(async (client) => {
      await assert.rejects(client.shutdown("done"), { name: "AbpClosedError", message: /no acknowledgement within the grace period/ });
      await client.transport.close();
    }));
});
