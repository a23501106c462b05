/**
 * The page going away with calls pending, and 1,000 cancelled calls leaving nothing behind in the
 * page, over each transport, in headless Chromium.
 */
import assert from "node:assert/strict";
import { demo, liveInstances } from "./support/browser.js";
import { type Driver, openDriver, TRANSPORTS, type TransportName } from "./support/drivers.js";
import { useChromiumSuite } from "./support/suite.js";

/** How each transport's app goes away, and what the agent is told. */
interface GoingAway {
  close(d: Driver): Promise<void>;
  navigate(d: Driver, to: string): Promise<void>;
  closed: RegExp;
  navigated: RegExp;
}

const GOING_AWAY: Record<TransportName, GoingAway> = {
  playwright: {
    close: (d) => d.page.close(),
    navigate: async (d, to) => {
      await d.page.goto(to);
    },
    closed: /^the page was closed/,
    navigated: /^the page navigated away/,
  },
  websocket: {
    close: (d) => d.page.close(),
    navigate: async (d, to) => {
      await d.page.goto(to);
    },
    closed: /^the WebSocket closed \(code 100[01]/,
    navigated: /^the WebSocket closed \(code 1001/,
  },
  postMessage: {
    // The agent page stays; the app's iframe is removed or sent elsewhere.
    close: (d) => d.page.evaluate(() => document.querySelector("#app")?.remove()),
    navigate: (d, to) =>
      d.page.evaluate((url) => {
        const frame = document.querySelector<HTMLIFrameElement>("#app");
        if (frame !== null) frame.src = url;
      }, to),
    closed: /^the app's page went away/,
    navigated: /^the app's page went away/,
  },
};

describe("ABP lifecycle and leaks, in headless Chromium", function () {
  this.timeout(60_000);
  const suite = useChromiumSuite();

  for (const transport of TRANSPORTS) {
    describe(`over ${transport}`, () => {
      let d: Driver;
      beforeEach(async () => {
        d = await openDriver(transport, suite.browser, suite.origins);
        await d.agent("initialize");
      });
      afterEach(async () => {
        await d.close();
      });

      /** Three calls pending: a render, a waiting call, and one queued behind them. */
      async function threePending() {
        await d.agent("start", "render", "render", { width: 4096, height: 4096 });
        await d.agent("start", "wait", "wait", {});
        await d.agent("start", "queued", "wait", {});
        await demo.until(d.app, "stats.running === 2 && stats.queued === 1");
      }

      async function assertAllFailed(pattern: RegExp) {
        for (const key of ["render", "wait", "queued"]) {
          const outcome = await d.agent("outcome", key);
          assert.equal(outcome.ok, false, `${key} settled with an error`);
          if (!outcome.ok) {
            assert.equal(outcome.name, "AbpClosedError");
            assert.match(outcome.error, pattern);
          }
        }
        assert.equal(await d.agent("inFlight"), 0);
      }

      it("the page closing settles every pending call with an error naming why", async () => {
        await threePending();
        await GOING_AWAY[transport].close(d);
        await assertAllFailed(GOING_AWAY[transport].closed);
      });

      it("the page navigating away settles every pending call with an error naming why", async () => {
        await threePending();
        await GOING_AWAY[transport].navigate(d, `${suite.origins.app.origin}/examples/abp/index.html?elsewhere`);
        await assertAllFailed(GOING_AWAY[transport].navigated);
      });

      it("after 1,000 cancelled calls the page holds no records, controllers, timers or listeners", async () => {
        const page = d.page;
        const before = {
          controllers: await liveInstances(page, d.app, "AbortController"),
          signals: await liveInstances(page, d.app, "AbortSignal"),
        };
        const tally: Record<string, number> = {};
        for (let batch = 0; batch < 10; batch++) {
          await d.agent("startMany", `b${batch}-`, 100, "wait");
          await demo.until(d.app, "stats.records === 100");
          const counts = await d.agent("abortMany", `b${batch}-`, 100);
          for (const [kind, n] of Object.entries(counts)) tally[kind] = (tally[kind] ?? 0) + n;
        }
        assert.deepEqual(tally, { "cancelled by abort": 1000 });
        assert.equal(await d.agent("inFlight"), 0);
        await demo.until(d.app, "stats.records === 0");
        const stats = await demo.stats(d.app);
        const { records, queued, running, controllers: handedOut, timers } = stats;
        const zero = { records: 0, queued: 0, running: 0, handedOut: 0, timers: 0 };
        assert.deepEqual({ records, queued, running, handedOut, timers }, zero);
        assert.equal(stats.remembered, 1000, "each id remembered once, within the bound");
        assert.equal(stats.started + stats.skipped, 1000);
        assert.equal((await demo.counters(d.app)).abortListeners, 0, "every abort listener the app added is gone");
        // What the page's heap really holds, after a full collection.
        const controllers = await liveInstances(page, d.app, "AbortController");
        assert.ok(controllers <= before.controllers, `no AbortController outlives its call (${controllers} live)`);
        assert.ok((await liveInstances(page, d.app, "AbortSignal")) <= before.signals, "no AbortSignal outlives its call");
      });
    });
  }
});
