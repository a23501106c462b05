import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { withCancellation } from "../../src/index.js";
import { harness, openSession, textPrompt } from "../support/client-harness.js";
import { assertEachAnsweredOnce, eventually, notificationsIn } from "../support/wire-assertions.js";

const { methods } = acp;

describe("the real end of a turn, embedded in an SDK client, against a real SDK agent that ignores cancels", () => {
  it("the app sees the prompt end cancelled, no late update after that, and its next prompt succeeds", async () => {
    const updates: string[] = [];
    const client = withCancellation(acp.client({ name: "editor" }), {
      graceMs: 150,
      turnEnd: { windowMs: 10_000 },
    }).onNotification(methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") {
        updates.push(params.update.content.text);
      }
    });
    const h = harness(client, [], "stubborn-sdk-agent");
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const first = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "stream"));
      await eventually(() => (updates.length > 0 ? true : undefined), "the turn streaming");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await first, { stopReason: "cancelled" });
      const shownBeforeAnswer = updates.length;
      const second = await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "next"));
      assert.deepEqual(second, { stopReason: "end_turn" }, "not refused as busy");
      assert.deepEqual(updates.slice(shownBeforeAnswer), ["next 1"], "only the new turn's update after the answer");
      const streamed = notificationsIn(h.log, "in", "session/update").length;
      const engine = client.cancellations[0]?.engine;
      assert.ok(engine);
      assert.equal(streamed - updates.length, engine.aftermathStats.lateUpdatesSuppressed);
      assert.ok(engine.aftermathStats.lateUpdatesSuppressed > 0);
      assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });
});
