import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { harness, openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { type A2aServer, startA2aServer } from "./a2a-server.js";
import { aosRequest } from "./aos-shape.js";
import { recordingGuardian, type RecordingGuardian } from "./guardians.js";

describe("an embedded ACP agent whose turn started an A2A task (SDK 2.4.0 agent over real stdio)", () => {
  let server: A2aServer;
  let guardian: RecordingGuardian;
  before(async () => {
    server = await startA2aServer();
    guardian = await recordingGuardian({ default: "allow" });
  });
  after(async () => {
    await server.close();
    await guardian.close();
  });

  it("session/cancel from the editor sends a guarded A2A cancel, and the remote task ends canceled", async () => {
    const h = harness(acp.client({ name: "editor" }), ["--a2a", server.baseUrl, "--guardian", guardian.url], "a2a-acp-agent");
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "write the story"));
      const taskId = await eventually(
        () => [...server.work.progress.entries()].find(([, steps]) => steps > 0)?.[0],
        "the remote A2A task is working",
      );

      await agent.notify(acp.methods.agent.session.cancel, { sessionId });

      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      const task = await server.inner.getTask({ tenant: "", id: taskId }, new ServerCallContext());
      assert.equal(task.status?.state, 5, "the remote task is canceled");
      assert.ok(server.work.aborted.has(taskId) && server.work.returned.has(taskId), "its work stopped");
      assert.equal(server.executor.running, 0);
      assert.deepEqual(server.cancelsReceived.map((c) => [c.method, c.taskId]), [["CancelTask", taskId]]);
      assert.equal(guardian.requests.length, 1, "the client hook asked the guardian once");
      const ask = aosRequest(guardian.requests[0]);
      assert.equal(ask.params.payload.params.id, taskId);
      assert.equal(ask.params.context.from.agent.name, "ACP coding agent");
      assert.equal(ask.params.reasoning, "The user cancelled the turn in the editor.");
    });
  });

  it("with a guardian that denies, session/cancel still ends the turn, and the remote task runs on (nothing sent)", async () => {
    const denying = await recordingGuardian({ default: "deny" });
    try {
      const h = harness(acp.client({ name: "editor" }), ["--a2a", server.baseUrl, "--guardian", denying.url], "a2a-acp-agent");
      await h.run(async (agent) => {
        const sessionId = await openSession(agent);
        const known = new Set(server.work.progress.keys());
        const prompt = agent.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "write the story"));
        const taskId = await eventually(
          () => [...server.work.progress.entries()].find(([id, steps]) => !known.has(id) && steps > 0)?.[0],
          "the remote A2A task is working",
        );
        server.cancelsReceived.length = 0;

        await agent.notify(acp.methods.agent.session.cancel, { sessionId });

        assert.deepEqual(await prompt, { stopReason: "cancelled" });
        assert.equal(denying.requests.length, 1);
        assert.deepEqual(server.cancelsReceived, [], "the denied cancel was never sent");
        const task = await server.inner.getTask({ tenant: "", id: taskId }, new ServerCallContext());
        assert.equal(task.status?.state, 2, "the remote task runs on");
      });
    } finally {
      await server.cancelLeftovers();
      await denying.close();
    }
  });
});
