import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { type CancellableApp, ndJsonStream, withCancellation, type WithCancellationOptions } from "../../src/index.js";
import { type ClientApp, harness, openSession, textPrompt } from "../support/client-harness.js";
import { endAndAwaitExit, spawnFixture } from "../support/spawn-peer.js";
import { assertEachAnsweredOnce, eventually, HANG_LIMIT_MS, notificationsIn, requestsIn, responsesTo } from "../support/wire-assertions.js";

const { methods } = acp;

/** A real SDK client adopted with `withCancellation`, and the texts of the updates its app was shown. */
function clientShowingUpdates(options: WithCancellationOptions): { client: CancellableApp<ClientApp>; updates: string[] } {
  const updates: string[] = [];
  const client = withCancellation(acp.client({ name: "editor" }), { graceMs: 150, ...options }).onNotification(
    methods.client.session.update,
    ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") {
        updates.push(params.update.content.text);
      }
    },
  );
  return { client, updates };
}

type AgentContext = Parameters<Parameters<ClientApp["connectWith"]>[1]>[0];

/**
 * Cancels a streaming turn of the stubborn agent (it ignores the cancel and streams 20
 * updates over 1.5 s), then sends the next prompt. Returns what the app was shown after the
 * cancelled answer, and the next prompt's answer.
 */
async function cancelAStreamingTurn(agent: AgentContext, updates: string[]) {
  const sessionId = await openSession(agent);
  const first = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "stream"));
  await eventually(() => (updates.length > 0 ? true : undefined), "the turn streaming");
  await agent.notify(methods.agent.session.cancel, { sessionId });
  assert.deepEqual(await first, { stopReason: "cancelled" });
  const shownBeforeAnswer = updates.length;
  const second = await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "next"));
  return { shownAfterAnswer: updates.slice(shownBeforeAnswer), second };
}

describe("the real end of a turn, embedded in an SDK client, against a real SDK agent that ignores cancels", () => {
  it("the app sees the prompt end cancelled, no late update after that, and its next prompt succeeds", async () => {
    const { client, updates } = clientShowingUpdates({ turnEnd: { windowMs: 10_000 } });
    const h = harness(client, [], "stubborn-sdk-agent");
    await h.run(async (agent) => {
      const { shownAfterAnswer, second } = await cancelAStreamingTurn(agent, updates);
      assert.deepEqual(second, { stopReason: "end_turn" }, "not refused as busy");
      assert.deepEqual(shownAfterAnswer, ["next 1"], "only the new turn's update after the answer");
      const streamed = notificationsIn(h.log, "in", "session/update").length;
      const engine = client.cancellations[0]?.engine;
      assert.ok(engine);
      assert.equal(streamed - updates.length, engine.aftermathStats.lateUpdatesSuppressed);
      assert.ok(engine.aftermathStats.lateUpdatesSuppressed > 0);
      assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("on by default for a client: no option, the SDK's stream wrapped, still no update of the cancelled turn after its answer", async () => {
    const { client, updates } = clientShowingUpdates({});
    const h = harness(client, [], "stubborn-sdk-agent");
    await h.run(async (agent) => {
      const { shownAfterAnswer, second } = await cancelAStreamingTurn(agent, updates);
      assert.deepEqual(second, { stopReason: "end_turn" }, "the next prompt waited for the agent's real end");
      assert.deepEqual(shownAfterAnswer, ["next 1"]);
      const engine = client.cancellations[0]?.engine;
      assert.ok(engine !== undefined && engine.aftermathStats.lateUpdatesSuppressed > 0, "the agent did stream late");
      assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("on by default on acp-cancel's own ndJsonStream too", async () => {
    const { client, updates } = clientShowingUpdates({});
    const peer = spawnFixture("stubborn-sdk-agent");
    try {
      await client.connectWith(ndJsonStream(peer.output, peer.input), async (agent) => {
        const { shownAfterAnswer, second } = await cancelAStreamingTurn(agent, updates);
        assert.deepEqual(second, { stopReason: "end_turn" });
        assert.deepEqual(shownAfterAnswer, ["next 1"]);
        const engine = client.cancellations[0]?.engine;
        assert.ok(engine !== undefined && engine.aftermathStats.lateUpdatesSuppressed > 0, "the agent did stream late");
      });
    } finally {
      await endAndAwaitExit(peer, HANG_LIMIT_MS);
    }
  });

  it("turnEnd: false turns it off: the late updates reach the app after the cancelled answer", async () => {
    const { client, updates } = clientShowingUpdates({ turnEnd: false });
    const h = harness(client, [], "stubborn-sdk-agent");
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const first = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "stream"));
      await eventually(() => (updates.length > 0 ? true : undefined), "the turn streaming");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await first, { stopReason: "cancelled" });
      const shownBeforeAnswer = updates.length;
      await eventually(() => (updates.length === 20 ? true : undefined), "the agent's whole stream");
      assert.ok(updates.length > shownBeforeAnswer, "late updates shown");
      // The agent answers right after its last update; the wire check below needs that answer read.
      const promptId = requestsIn(h.log, "out", methods.agent.session.prompt)[0]?.id;
      await eventually(() => (responsesTo(h.log, "in", promptId).length > 0 ? true : undefined), "the agent's own answer");
      assert.equal(client.cancellations[0]?.engine.aftermathStats.turnsTracked, 0);
    });
    assertEachAnsweredOnce(h.log);
  });
});
