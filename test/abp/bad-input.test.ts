/**
 * Bad input from either side, over each transport, in headless Chromium: malformed envelopes,
 * unknown types, payloads over the size limit, messages from the wrong origin. Each gets a clear
 * error naming what was wrong, nothing starts, and the session carries on.
 */
import assert from "node:assert/strict";
import { demo } from "./support/browser.js";
import { type Driver, openDriver } from "./support/drivers.js";
import { useChromiumSuite } from "./support/suite.js";

const OVER_LIMIT = "x".repeat(1024 * 1024 + 10);

/** The session still works: a call is answered normally. */
async function assertSessionSurvives(d: Driver, key: string): Promise<void> {
  await d.agent("start", key, "echo", { still: "alive" });
  const outcome = await d.agent("outcome", key);
  assert.equal(outcome.ok && outcome.result.success, true, `a call after the bad input is answered (${JSON.stringify(outcome)})`);
}

const FROM_AGENT: { input: unknown; code: string; message: RegExp }[] = [
  { input: "{oops", code: "INVALID_MESSAGE", message: /not valid JSON/ },
  { input: { type: "capabilities/call", timestamp: 1, payload: { capability: "render", callId: "x" } }, code: "INVALID_MESSAGE", message: /needs an envelope id/ },
  { input: { type: "capabilities/explode", id: "e1", timestamp: 1, payload: {} }, code: "UNKNOWN_TYPE", message: /unknown message type "capabilities\/explode"/ },
  { input: { type: "capabilities/call", id: "e2", timestamp: 1, payload: { capability: "render", callId: 5 } }, code: "INVALID_MESSAGE", message: /callId must be a string/ },
  { input: { type: "capabilities/cancel", id: "e3", timestamp: 1, payload: {} }, code: "INVALID_MESSAGE", message: /callId must be a string/ },
  { input: { type: "capabilities/call-result", id: "e4", timestamp: 1, payload: { success: true } }, code: "INVALID_MESSAGE", message: /not sent to an app/ },
  {
    input: { type: "capabilities/call", id: "e5", timestamp: 1, payload: { capability: "echo", callId: "big", params: { blob: OVER_LIMIT } } },
    code: "MESSAGE_TOO_LARGE",
    message: /^message is over the size limit of 1048576 bytes$/,
  },
];

const FROM_APP: { input: unknown; message: RegExp }[] = [
  { input: "{oops", message: /^AbpProtocolError: message from the app is not valid JSON/ },
  { input: { type: "bogus", timestamp: 1, payload: {} }, message: /^AbpProtocolError: invalid envelope from the app: unknown message type "bogus"/ },
  { input: { type: "progress", timestamp: "now", payload: {} }, message: /^AbpProtocolError: invalid envelope from the app: envelope timestamp must be a number/ },
  { input: { type: "initialize", id: "i1", timestamp: 1, payload: {} }, message: /"initialize", which only an agent sends/ },
  { input: OVER_LIMIT, message: /^AbpProtocolError: message from the app is over the size limit of 1048576 bytes$/ },
];

describe("ABP bad input, in headless Chromium", function () {
  this.timeout(30_000);
  const suite = useChromiumSuite();

  for (const transport of ["postMessage", "websocket"] as const) {
    describe(`over ${transport}`, () => {
      let d: Driver;
      beforeEach(async () => {
        d = await openDriver(transport, suite.browser, suite.origins);
        await d.agent("initialize");
      });
      afterEach(async () => {
        await d.close();
      });

      it("the app refuses malformed, unknown and oversize envelopes with a clear error, and serves on", async () => {
        for (const { input } of FROM_AGENT) await d.sendRaw(input);
        await demo.until(d.app, `globalThis.demo.rejections.length >= ${FROM_AGENT.length}`);
        const rejections = await demo.rejections(d.app);
        assert.deepEqual(rejections.map((r) => r.code), FROM_AGENT.map((c) => c.code));
        FROM_AGENT.forEach((c, i) => assert.match(rejections[i]?.message ?? "", c.message));
        assert.equal((await demo.stats(d.app)).started, 0, "nothing started");
        await assertSessionSurvives(d, "after");
      });

      it("the agent refuses malformed, unknown and oversize envelopes from the app with a clear error, and carries on", async () => {
        for (const { input } of FROM_APP) await demo.sendRaw(d.app, input);
        await assertSessionSurvives(d, "after");
        const errors = await d.agentErrors();
        assert.equal(errors.length, FROM_APP.length, errors.join("\n"));
        FROM_APP.forEach((c, i) => assert.match(errors[i] ?? "", c.message));
      });
    });
  }

  describe("wrong origins", () => {
    it("postMessage: a third origin's messages are refused by the app and by the agent, naming the origin", async () => {
      const d = await openDriver("postMessage", suite.browser, suite.origins);
      try {
        await d.agent("initialize");
        const stranger = d.stranger;
        assert.ok(stranger);
        await stranger.evaluate(() => {
          const call = { type: "capabilities/call", id: "evil", timestamp: 1, payload: { capability: "render", callId: "evil-1" } };
          parent.frames[0]?.postMessage(call, "*");
          parent.postMessage({ type: "capabilities/call-result", id: "c1-1", timestamp: 1, payload: { success: true } }, "*");
        });
        await demo.until(d.app, "globalThis.demo.rejections.length === 1");
        const [rejection] = await demo.rejections(d.app);
        assert.equal(rejection?.code, "WRONG_ORIGIN");
        assert.equal(rejection?.message, `message from origin "${suite.origins.stranger.origin}" is not allowed`);
        assert.equal((await demo.stats(d.app)).started, 0, "the stranger's call never started");
        await assertSessionSurvives(d, "after");
        const errors = await d.agentErrors();
        assert.deepEqual(errors, [
          `AbpProtocolError: ABP message from origin "${suite.origins.stranger.origin}" ignored (expected "${suite.origins.app.origin}")`,
        ]);
      } finally {
        await d.close();
      }
    });

    it("WebSocket: a page of another origin cannot open a session; the app's session carries on", async () => {
      const d = await openDriver("websocket", suite.browser, suite.origins);
      const strangerPage = await suite.browser.newPage();
      try {
        await d.agent("initialize");
        await strangerPage.goto(`${suite.origins.stranger.origin}/examples/abp/index.html`);
        const attempt = await strangerPage.evaluate(
          (url) =>
            new Promise<string>((resolve) => {
              const socket = new WebSocket(url);
              socket.onopen = () => resolve("opened");
              socket.onerror = () => resolve("refused");
            }),
          d.endpoint ?? "",
        );
        assert.equal(attempt, "refused");
        await assertSessionSurvives(d, "after");
      } finally {
        await strangerPage.close();
        await d.close();
      }
    });
  });

  describe("over playwright", () => {
    let d: Driver;
    beforeEach(async () => {
      d = await openDriver("playwright", suite.browser, suite.origins);
      await d.agent("initialize");
    });
    afterEach(async () => {
      await d.close();
    });

    it("window.abp refuses bad arguments from an evaluate with a clear error, and serves on", async () => {
      const answers = await d.page.evaluate((blob) => {
        const abp = (globalThis as unknown as { abp: Record<string, (...a: unknown[]) => unknown> }).abp;
        let thrown = "";
        try {
          abp.initialize?.({});
        } catch (error) {
          thrown = String(error);
        }
        return Promise.all([
          abp.call?.(42, {}, { callId: "p1" }),
          abp.call?.("echo", {}, { callId: "p2", timeout: -5 }),
          abp.call?.("echo", { blob }, { callId: "p3" }),
          abp.cancel?.(""),
          thrown,
        ]);
      }, OVER_LIMIT);
      assert.deepEqual(answers[0], {
        success: false,
        error: { code: "INVALID_MESSAGE", message: "capabilities/call payload.capability must be a non-empty string", retryable: false },
      });
      assert.match(JSON.stringify(answers[1]), /options.timeout must be a positive number/);
      assert.match(JSON.stringify(answers[2]), /"code":"MESSAGE_TOO_LARGE"/);
      assert.deepEqual(answers[3], {
        callId: "(invalid)",
        cancelled: false,
        error: { code: "INVALID_MESSAGE", message: "capabilities/cancel payload.callId must be a string of 1 to 200 characters" },
      });
      assert.match(String(answers[4]), /TypeError: initialize payload.agent must be/);
      assert.equal((await demo.stats(d.app)).started, 0);
      await assertSessionSurvives(d, "after");
    });

    it("the agent refuses malformed and oversize answers from the page with a clear error, and carries on", async () => {
      // A broken window.abp in the page, then the real one back.
      await d.page.evaluate((blob) => {
        const g = globalThis as unknown as { abp: unknown; realAbp: unknown };
        g.realAbp = g.abp;
        Object.defineProperty(g, "abp", {
          configurable: true,
          value: {
            call: (_c: string, params: { big?: boolean }) => (params.big ? { success: true, data: blob } : { success: "yes" }),
            cancel: () => ({ cancelled: 1 }),
          },
        });
      }, OVER_LIMIT);
      await d.agent("start", "junk", "echo", {});
      await d.agent("start", "big", "echo", { big: true });
      const junk = await d.agent("outcome", "junk");
      const big = await d.agent("outcome", "big");
      assert.deepEqual(junk.ok ? junk : { name: junk.name, error: junk.error }, {
        name: "AbpProtocolError",
        error: "invalid capabilities/call answer from the page: success: Invalid input: expected boolean, received string",
      });
      const tooLarge = /^capabilities\/call answer from the page is over the size limit of 1048576 bytes$/;
      assert.ok(!big.ok && tooLarge.test(big.error), JSON.stringify(big).slice(0, 200));
      await assert.rejects(d.agent("cancel", "x"), /invalid capabilities\/cancel answer from the page: callId/);
      await d.page.evaluate(() => {
        const g = globalThis as unknown as { abp: unknown; realAbp: unknown };
        Object.defineProperty(g, "abp", { configurable: true, value: g.realAbp });
      });
      await assertSessionSurvives(d, "after");
    });
  });
});
