import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import {
  aborted,
  agentInFlight,
  cooperativeClient,
  harness,
  openSession,
  textPrompt,
} from "../support/client-harness.js";
import {
  assertEachAnsweredOnce,
  eventually,
  notificationsIn,
  requestsIn,
  responsesTo,
} from "../support/wire-assertions.js";

const { methods } = acp;

/** A plain SDK client whose handlers honour their signals (as SDK 2.4.0 allows), nothing more. */
/** Prompts with `text`, sends session/cancel once the prompt is out, and expects a cancelled turn. */
async function turnEndsCancelledOnSessionCancel(text: string, agentArgs: string[] = [], placement: string[] = []) {
  const h = harness(cooperativeClient(), [...placement, ...agentArgs]);
  await h.run(async (agent) => {
    const sessionId = await openSession(agent);
    const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, text));
    await eventually(() => (requestsIn(h.log, "out", "session/prompt").length ? true : undefined), "prompt sent");
    await agent.notify(methods.agent.session.cancel, { sessionId });
    assert.deepEqual(await prompt, { stopReason: "cancelled" });
    assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
  });
  assertEachAnsweredOnce(h.log);
}

// The same behaviour whether withCancellation wraps the SDK's ndJsonStream or attaches to
// acp-cancel's own (engine inline).
for (const [name, placement] of [
  ["wrapping the SDK's ndJsonStream", []],
  ["on acp-cancel's ndJsonStream", ["--inline"]],
] as const) describe(`embedded in an SDK agent (one line, ${name}), driven over real stdio`, () => {
  it("session/cancel sends $/cancel_request for every nested request and ends the turn cancelled", async () => {
    const h = harness(cooperativeClient(), [...placement]);
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "nested"));
      const nested = await eventually(() => {
        const seen = requestsIn(h.log, "in");
        return seen.length === 2 ? seen : undefined;
      }, "both nested requests");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await prompt, { stopReason: "cancelled" });

      const cancelled = notificationsIn(h.log, "in", "$/cancel_request").map(
        (m) => (m.params as { requestId: unknown }).requestId,
      );
      assert.deepEqual(
        [...cancelled].sort(),
        nested.map((m) => m.id).sort(),
        "one $/cancel_request per nested request",
      );
      assert.deepEqual(nested.map((m) => m.method).sort(), [
        "fs/read_text_file",
        "session/request_permission",
      ]);
      assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("$/cancel_request for the prompt cascades the same way", async () => {
    const h = harness(cooperativeClient(), [...placement]);
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const stop = new AbortController();
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "nested"), {
        cancellationSignal: stop.signal,
      });
      await eventually(() => (requestsIn(h.log, "in").length === 2 ? true : undefined), "nested requests");
      stop.abort();
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      const promptId = requestsIn(h.log, "out", "session/prompt")[0]?.id;
      assert.deepEqual(
        notificationsIn(h.log, "out", "$/cancel_request").map((m) => m.params),
        [{ requestId: promptId }],
      );
      assert.equal(notificationsIn(h.log, "in", "$/cancel_request").length, 2);
      assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("a handler that throws a plain Error once aborted still ends the turn cancelled", () => turnEndsCancelledOnSessionCancel("throw-on-abort", [], [...placement]));

  it("a handler's own abort is answered like a cancel: the turn ends cancelled, not -32603", async () => {
    const h = harness(cooperativeClient(), [...placement]);
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const result = await agent.request(
        methods.agent.session.prompt,
        textPrompt(sessionId, "internal-abort"),
      );
      assert.deepEqual(result, { stopReason: "cancelled" });
      assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
    });
  });

  it("a turn whose handler ignores every signal is answered cancelled after the grace period", () => turnEndsCancelledOnSessionCancel("ignore-cancel", ["--grace-ms", "150"], [...placement]));

  it("two sessions: cancelling one leaves the other untouched", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const client = acp
      .client({ name: "two-sessions" })
      .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
        if (params.sessionId === "session-1") {
          await aborted(signal);
          return { outcome: { outcome: "cancelled" } };
        }
        await gate;
        return { outcome: { outcome: "selected", optionId: "allow" } };
      })
      .onRequest(methods.client.fs.readTextFile, async ({ params, signal }) => {
        if (params.sessionId === "session-1") {
          await aborted(signal);
          throw signal.reason;
        }
        await gate;
        return { content: "hello" };
      });
    const h = harness(client, [...placement]);
    await h.run(async (agent) => {
      const first = await openSession(agent);
      const { sessionId: second } = await agent.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
      });
      const promptA = agent.request(methods.agent.session.prompt, textPrompt(first, "nested"));
      const promptB = agent.request(methods.agent.session.prompt, textPrompt(second, "nested"));
      await eventually(
        () => (requestsIn(h.log, "in").length === 4 ? true : undefined),
        "four nested requests",
      );
      await agent.notify(methods.agent.session.cancel, { sessionId: first });
      assert.deepEqual(await promptA, { stopReason: "cancelled" });
      const cancelledIds = new Set(
        notificationsIn(h.log, "in", "$/cancel_request").map(
          (m) => (m.params as { requestId: unknown }).requestId,
        ),
      );
      const secondIds = requestsIn(h.log, "in")
        .filter((m) => (m.params as { sessionId: string }).sessionId === second)
        .map((m) => m.id);
      for (const id of secondIds)
        assert.ok(!cancelledIds.has(id), `session B request ${String(id)} was cancelled`);
      release();
      assert.deepEqual(await promptB, { stopReason: "end_turn" });
      for (const id of secondIds) {
        const [answer] = responsesTo(h.log, "out", id);
        assert.ok(answer && "result" in answer, "session B nested requests completed normally");
      }
      assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("advertises its capability under _meta in the initialize response", async () => {
    const h = harness(cooperativeClient(), [...placement]);
    await h.run(async (agent) => {
      const response = await agent.request(methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      assert.deepEqual(response.agentCapabilities?._meta?.["acp-cancel/cancellation"], {
        version: 1,
        cancelRequest: true,
        cascade: true,
        sessionCancel: true,
      });
    });
  });
});
