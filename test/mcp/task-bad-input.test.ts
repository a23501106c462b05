import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Job, JobCancelledError } from "../../src/core/index.js";
import { cancellableMcpClient, type McpEvent } from "../../src/mcp/index.js";
import { eventually } from "../support/wire-assertions.js";
import { type RogueMode, rogueAnswers } from "./rogue-task-peer.js";

/** Our client binding against the rogue server of `mode`, in process over the SDK's linked pair. */
async function rogue(mode: RogueMode, graceMs = 300) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  serverSide.onmessage = (message) => {
    for (const answer of rogueAnswers(mode, message as never)) void serverSide.send(answer as JSONRPCMessage);
  };
  await serverSide.start();
  const events: McpEvent[] = [];
  const mcp = cancellableMcpClient(new Client({ name: "client", version: "1.0.0" }), { graceMs, onEvent: (e) => events.push(e) });
  await mcp.connect(clientSide);
  const cancelledTask = async () => {
    const turn = new Job("turn");
    const call = mcp.callTool({ name: "work", arguments: {} }, { parent: turn, task: {} });
    await eventually(() => (events.some((e) => e.type === "task") ? true : undefined), "the task answer");
    const cancelledAt = performance.now();
    turn.cancel("session");
    await assert.rejects(call, JobCancelledError);
    return performance.now() - cancelledAt;
  };
  const goesOn = async () => {
    assert.deepEqual((await mcp.callTool({ name: "echo", arguments: {} })).content, [{ type: "text", text: "echo" }]);
    assert.equal(mcp.inFlight, 0);
  };
  const settled = () => events.flatMap((e) => (e.type === "settled" && e.method === "tools/call" ? [e.outcome] : []));
  return { mcp, events, cancelledTask, goesOn, settled, close: () => mcp.client.close() };
}

describe("MCP tasks, bad input from a server: a clear error or a bounded wait, named in the events, the connection goes on", () => {
  it("a task answer without a valid taskId: the call fails with a clear error and a bad-task event", async () => {
    const peer = await rogue("no-task-id");
    try {
      await assert.rejects(peer.mcp.callTool({ name: "work", arguments: {} }, { task: {} }), /no valid taskId/);
      assert.ok(peer.events.some((e) => e.type === "bad-task" && /taskId/.test(e.problem)));
      assert.deepEqual(peer.settled(), ["failed"]);
      await peer.goesOn();
    } finally {
      await peer.close();
    }
  });

  it("a task that never becomes terminal after tasks/cancel: the call is cancelled at the grace, task-running reported", async () => {
    const peer = await rogue("never-terminal");
    try {
      const waited = await peer.cancelledTask();
      assert.ok(waited >= 250, `held for the grace (${waited.toFixed(0)} ms)`);
      const running = peer.events.find((e) => e.type === "task-running");
      assert.equal(running?.type === "task-running" && running.status, "working");
      assert.deepEqual(peer.settled(), ["gave-up"]);
      await peer.goesOn();
    } finally {
      await peer.close();
    }
  });

  it("a status outside the spec's set (tasks/cancel and tasks/get): bad-task events, a wait bounded by the grace", async () => {
    const peer = await rogue("bad-status");
    try {
      await peer.cancelledTask();
      assert.ok(peer.events.some((e) => e.type === "bad-task" && /"paused"/.test(e.problem)));
      assert.ok(peer.events.some((e) => e.type === "task-running"));
      await peer.goesOn();
    } finally {
      await peer.close();
    }
  });

  it("tasks/cancel answered 'already terminal': counts as done, the call ends at once, not at the grace", async () => {
    const peer = await rogue("terminal", 60_000);
    try {
      await peer.cancelledTask();
      const answer = peer.events.find((e) => e.type === "task-cancel");
      assert.equal(answer?.type === "task-cancel" && answer.answer, "already-terminal");
      assert.deepEqual(peer.settled(), ["cancelled"]);
      await peer.goesOn();
    } finally {
      await peer.close();
    }
  });
});
