import assert from "node:assert/strict";
import { type AnyJob, Job } from "../../src/core/index.js";
import { createAcpMessageConnection, currentJob } from "../../src/jsonrpc/index.js";
import { aborted, textPrompt } from "../support/client-harness.js";
import { spawnFixture } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";
import { settle } from "../support/jobs.js";

describe("vscode-jsonrpc binding: currentJob() hands a handler's job to other bindings", () => {
  it("a child job of another binding started in a handler is cancelled when the peer cancels the request", async () => {
    const peer = spawnFixture("sdk-agent");
    const connection = createAcpMessageConnection(peer.child.stdout, peer.child.stdin);
    const children: Job<string>[] = [];
    let outside: AnyJob | undefined;
    connection.onRequest("session/request_permission", async () => {
      const child = new Job("another binding's call", currentJob());
      children.push(child);
      await aborted(child.signal);
      settle(child); // its binding settles it once its own cancel is done
      return { outcome: { outcome: "cancelled" } };
    });
    connection.onRequest("fs/read_text_file", async () => {
      const child = new Job("another binding's call", currentJob());
      children.push(child);
      await aborted(child.signal);
      settle(child);
      throw new Error("stopped");
    });
    connection.listen();
    try {
      outside = currentJob();
      await connection.sendRequest("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await connection.sendRequest<{ sessionId: string }>("session/new", { cwd: "/", mcpServers: [] });
      const prompt = connection.sendRequest<{ stopReason: string }>("session/prompt", textPrompt(sessionId, "nested"));
      while (children.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(children.every((child) => child.parent !== undefined), "each handler had a job to hand on");
      await connection.sendNotification("session/cancel", { sessionId });
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      // The agent's $/cancel_request (external), or the client's own session/cancel for its dialog (session).
      await eventually(() => (children.every((child) => child.isSettled) ? true : undefined), "both children settled");
      assert.deepEqual(children.map((child) => child.reason).sort(), ["external", "session"]);
      assert.equal(outside, undefined, "no job outside a handler");
      assert.deepEqual(connection.inFlight, { outgoing: 0, incoming: 0 });
    } finally {
      connection.dispose();
      peer.child.stdin.end();
      await peer.exited;
    }
  });
});
