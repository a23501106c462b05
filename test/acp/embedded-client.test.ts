import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { withCancellation } from "../../src/index.js";
import { agentInFlight, harness, openSession, textPrompt } from "../support/client-harness.js";
import {
  assertEachAnsweredOnce,
  errorCode,
  eventually,
  notificationsIn,
  requestsIn,
  responsesTo,
} from "../support/wire-assertions.js";

const { methods } = acp;

function engineOf(app: ReturnType<typeof withCancellation<ReturnType<typeof acp.client>>>) {
  const engine = app.cancellations[0]?.engine;
  assert.ok(engine, "the client connected through the engine");
  return engine;
}

describe("embedded in an SDK client, against real SDK agents over stdio", () => {
  it("answers the client's own never-resolving permission dialog 'cancelled' after session/cancel", async () => {
    const updates: string[] = [];
    let handlerSignal: AbortSignal | undefined;
    const client = withCancellation(acp.client({ name: "editor" }))
      .onRequest(methods.client.session.requestPermission, ({ signal }) => {
        handlerSignal = signal;
        return new Promise(() => {}); // the app never answers, and ignores its signal
      })
      .onNotification(methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") {
          updates.push(params.update.content.text);
        }
      });
    const h = harness(client, ["--bare"]);
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "permission-report"));
      const [permission] = await eventually(() => {
        const seen = requestsIn(h.log, "in", "session/request_permission");
        return seen.length ? seen : undefined;
      }, "the permission request");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      assert.deepEqual(
        responsesTo(h.log, "out", permission?.id).map((m) => m.result),
        [{ outcome: { outcome: "cancelled" } }],
      );
      assert.deepEqual(
        updates.map((text) => JSON.parse(text)),
        [{ outcome: { outcome: "cancelled" } }],
      );
      assert.equal(handlerSignal?.aborted, true, "the app's handler was told to stop");
      assert.deepEqual(engineOf(client).inFlight, { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("depth 3 (prompt → client handler → request back to the agent), cancelled from the top: each level answered once", async () => {
    const client = withCancellation(acp.client({ name: "editor" })).onRequest(
      "*",
      async ({ method, params, agent }) => {
        if (method !== "_test/deep") throw acp.RequestError.methodNotFound(method);
        // The client's handler makes its own request back to the agent, threading no signal.
        return agent.request("_test/leaf", params);
      },
    );
    const h = harness(client);
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "deep"));
      const [leaf] = await eventually(() => {
        const seen = requestsIn(h.log, "out", "_test/leaf");
        return seen.length ? seen : undefined;
      }, "the leaf request");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      const [deep] = requestsIn(h.log, "in", "_test/deep");
      // The client cancelled the leaf it issued under the cancelled deep request (handler scope),
      // and the agent cancelled the deep request it issued under the turn.
      assert.deepEqual(
        notificationsIn(h.log, "out", "$/cancel_request").map((m) => m.params),
        [{ requestId: leaf?.id }],
      );
      assert.ok(
        notificationsIn(h.log, "in", "$/cancel_request").some(
          (m) => (m.params as { requestId: unknown }).requestId === deep?.id,
        ),
      );
      // Nothing orders these two answers before the prompt's: wait for them.
      const [leafAnswer, deepAnswer] = await eventually(() => {
        const answers = [responsesTo(h.log, "in", leaf?.id)[0], responsesTo(h.log, "out", deep?.id)[0]];
        return answers.every((answer) => answer !== undefined) ? answers : undefined;
      }, "the answers to the leaf and to the deep request");
      assert.equal(errorCode(leafAnswer), -32800);
      assert.equal(errorCode(deepAnswer), -32800);
      assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
      assert.deepEqual(engineOf(client).inFlight, { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("an agent that ignores $/cancel_request: the prompt settles after the grace period, its late reply is dropped", async () => {
    const client = withCancellation(acp.client({ name: "editor" }), { graceMs: 100 });
    const h = harness(client, ["--bare"]);
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const stop = new AbortController();
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "late-reply"), {
        cancellationSignal: stop.signal,
      });
      await eventually(
        () => (requestsIn(h.log, "out", "session/prompt").length ? true : undefined),
        "prompt out",
      );
      stop.abort();
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      const promptId = requestsIn(h.log, "out", "session/prompt")[0]?.id;
      await eventually(
        () => (responsesTo(h.log, "in", promptId).length ? true : undefined),
        "the late reply",
      );
      const engine = engineOf(client);
      await eventually(
        () => (engine.stats.lateRepliesDropped === 1 ? true : undefined),
        "the late reply dropped",
      );
      assert.equal(engine.stats.answeredForPeer, 1);
      assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
    });
  });

  it("a deadline ends a request with -32800 and reason 'deadline'", async () => {
    const client = withCancellation(acp.client({ name: "editor" }), { deadlines: { "_test/slow": 50 } });
    const h = harness(client);
    await h.run(async (agent) => {
      await openSession(agent);
      await assert.rejects(agent.request("_test/slow", {}), (error: acp.RequestError) => {
        assert.equal(error.code, -32800);
        return true;
      });
      const slowId = requestsIn(h.log, "out", "_test/slow")[0]?.id;
      assert.deepEqual(
        notificationsIn(h.log, "out", "$/cancel_request").map((m) => m.params),
        [{ requestId: slowId }],
      );
      // The editor is answered at the deadline; the job leaves once the agent has stopped (its reply, or the grace).
      // Both engines' tables empty once the agent's reply (written before its job leaves) is in: quiescence, not the instant.
      await eventually(() => (engineOf(client).inFlight.client === 0 ? true : undefined), "the slow request's job gone");
      assert.deepEqual(engineOf(client).inFlight, { client: 0, agent: 0 });
      let agentSide = await agentInFlight(agent);
      for (let tries = 0; agentSide.client !== 0 && tries < 100; tries++) agentSide = await agentInFlight(agent);
      assert.deepEqual(agentSide, { client: 0, agent: 0 });
    });
    assertEachAnsweredOnce(h.log);
  });

  it("an agent's deadline on its own handler answers the client -32800 with reason 'deadline'", async () => {
    const client = acp.client({ name: "plain-editor" });
    const h = harness(client, ["--deadline", "_test/slow=50"]);
    await h.run(async (agent) => {
      await openSession(agent);
      await assert.rejects(agent.request("_test/slow", {}), (error: acp.RequestError) => {
        assert.equal(error.code, -32800);
        assert.equal((error.data as { reason?: string }).reason, "deadline");
        return true;
      });
      assert.deepEqual(await agentInFlight(agent), { client: 0, agent: 0 });
    });
  });
});
