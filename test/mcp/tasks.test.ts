import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Job, JobCancelledError } from "../../src/core/index.js";
import { cancellableMcpClient, type McpEvent } from "../../src/mcp/index.js";
import { isAlive } from "../support/bridge-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { taskServer } from "./task-tools.js";

/** The task server of task-tools.ts and our client binding in this process, over the SDK's linked pair. */
async function inProcess(graceMs = 2_000) {
  const lines: string[] = [];
  const serverEvents: McpEvent[] = [];
  const clientEvents: McpEvent[] = [];
  const { server, tasks } = taskServer((line) => lines.push(line), (event) => serverEvents.push(event));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => (sent.push(message), send(message, options));
  await server.connect(serverSide);
  const client = new Client({ name: "task-client", version: "1.0.0" });
  const mcp = cancellableMcpClient(client, { graceMs, onEvent: (event) => clientEvents.push(event) });
  await mcp.connect(clientSide);
  const line = (pattern: RegExp) => eventually(() => lines.find((l) => pattern.test(l)), String(pattern));
  const status = async (taskId: string) => (await client.experimental.tasks.getTask(taskId)).status;
  const methods = () => sent.flatMap((m) => ("method" in m ? [m.method] : []));
  return { server, tasks, client, mcp, lines, line, status, methods, serverEvents, clientEvents, close: () => client.close() };
}

const taskIdOf = (events: McpEvent[]) => {
  const created = events.find((e) => e.type === "task");
  return created?.type === "task" ? created.taskId : undefined;
};

describe("MCP tasks: a Stop reaches a tool call that became a task, and stops its work (SDK 1.x, in process)", () => {
  it("a parent cancel sends tasks/cancel(taskId), not notifications/cancelled; the work's child process is killed; status cancelled at the answer and after; every job settled", async () => {
    const peer = await inProcess();
    try {
      const turn = new Job("turn");
      const call = peer.mcp.callTool({ name: "build", arguments: {} }, { parent: turn, task: { ttl: 60_000 } });
      const started = await peer.line(/^task \w+ child \d+$/);
      const [, taskId, , pid] = started.split(" ");
      assert.equal(taskIdOf(peer.clientEvents), taskId);
      assert.ok(isAlive(Number(pid)), "the task's child process runs");
      turn.cancel("session");
      const error = await call.then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof JobCancelledError && error.reason === "session");
      // The call ended on the tasks/cancel answer: the task was already cancelled then.
      const cancelAnswer = peer.clientEvents.find((e) => e.type === "task-cancel");
      assert.equal(cancelAnswer?.type === "task-cancel" && cancelAnswer.answer, "cancelled");
      assert.equal(await peer.status(taskId ?? ""), "cancelled");
      await peer.line(new RegExp(`^task ${taskId} ended SIGTERM$`));
      assert.equal(isAlive(Number(pid)), false, "the child process is gone");
      await eventually(() => (peer.tasks.inFlight === 0 ? true : undefined), "the task's work job settled");
      assert.equal(await peer.status(taskId ?? ""), "cancelled", "still cancelled after the work ended");
      assert.equal(peer.methods().filter((m) => m === "tasks/cancel").length, 1);
      assert.equal(peer.methods().filter((m) => m === "notifications/cancelled").length, 1, "only for the tasks/result wait");
      assert.equal(peer.mcp.inFlight, 0);
      assert.equal(turn.childCount, 0);
      assert.deepEqual(
        peer.serverEvents.filter((e) => e.type === "task-cancelled").map((e) => e.type === "task-cancelled" && e.reason),
        ["external"],
      );
    } finally {
      await peer.close();
    }
  });

  it("a cancel while the task-augmented tools/call is in flight sends no notifications/cancelled: it waits for the task handle, then tasks/cancel", async () => {
    const peer = await inProcess();
    try {
      const turn = new Job("turn");
      const call = peer.mcp.callTool({ name: "build", arguments: {} }, { parent: turn, task: {} });
      turn.cancel("session");
      await assert.rejects(call, JobCancelledError);
      const taskId = taskIdOf(peer.clientEvents);
      assert.ok(taskId !== undefined, "the task handle came after the cancel");
      assert.equal(await peer.status(taskId), "cancelled");
      const [, , , pid] = (await peer.line(new RegExp(`^task ${taskId} child \\d+$`))).split(" ");
      await peer.line(new RegExp(`^task ${taskId} ended SIGTERM$`));
      assert.equal(isAlive(Number(pid)), false, "the child process is gone");
      assert.deepEqual(peer.methods().filter((m) => m === "tasks/cancel" || m === "tasks/result" || m === "notifications/cancelled"), ["tasks/cancel"]);
      await eventually(() => (peer.tasks.inFlight === 0 ? true : undefined), "the work settled");
      assert.equal(peer.mcp.inFlight, 0);
    } finally {
      await peer.close();
    }
  });

  it("a task not cancelled is answered through tasks/result with the work's result", async () => {
    const peer = await inProcess();
    try {
      const result = await peer.mcp.callTool({ name: "quick", arguments: { ms: 10 } }, { task: {} });
      assert.deepEqual(result.content, [{ type: "text", text: "quick result" }]);
      assert.equal(peer.mcp.inFlight, 0);
      await eventually(() => (peer.tasks.inFlight === 0 ? true : undefined), "the work settled");
      assert.deepEqual(
        peer.clientEvents.filter((e) => e.method === "tools/call").map((e) => (e.type === "settled" ? `settled:${e.outcome}` : e.type)),
        ["sent", "task", "settled:answered"],
      );
    } finally {
      await peer.close();
    }
  });

  it("work that ignores its signal and returns later: the task stays cancelled, its result is dropped", async () => {
    const peer = await inProcess();
    try {
      const stop = new AbortController();
      const call = peer.mcp.callTool({ name: "stubborn", arguments: { ms: 300 } }, { signal: stop.signal, task: {} });
      const taskId = await eventually(() => taskIdOf(peer.clientEvents), "the task");
      stop.abort();
      await assert.rejects(call, JobCancelledError);
      assert.equal(await peer.status(taskId), "cancelled");
      await peer.line(new RegExp(`^task ${taskId} ended returned$`));
      await eventually(() => (peer.tasks.inFlight === 0 ? true : undefined), "the work settled");
      assert.equal(await peer.status(taskId), "cancelled", "the late result did not turn it completed");
      assert.ok(peer.serverEvents.some((e) => e.type === "task-result-dropped" && e.taskId === taskId));
    } finally {
      await peer.close();
    }
  });

  it("the connection closing cancels a running task with reason shutdown and kills its child process", async () => {
    const peer = await inProcess();
    const call = peer.mcp.callTool({ name: "build", arguments: {} }, { task: {} });
    const [, taskId, , pid] = (await peer.line(/^task \w+ child \d+$/)).split(" ");
    await peer.close();
    await assert.rejects(call);
    await peer.line(new RegExp(`^task ${taskId} ended SIGTERM$`));
    assert.equal(isAlive(Number(pid)), false);
    await eventually(() => (peer.tasks.inFlight === 0 ? true : undefined), "the work settled");
    assert.deepEqual(
      peer.serverEvents.filter((e) => e.type === "task-cancelled").map((e) => e.type === "task-cancelled" && e.reason),
      ["shutdown"],
    );
    assert.equal((await peer.tasks.store.getTask(taskId ?? ""))?.status, "cancelled");
    assert.equal(peer.mcp.inFlight, 0);
  });

  it("tasks/cancel for an unknown task: a clear error, nothing changed, the connection goes on", async () => {
    const peer = await inProcess();
    try {
      const running = peer.mcp.callTool({ name: "quick", arguments: { ms: 200 } }, { task: {} });
      await assert.rejects(peer.client.experimental.tasks.cancelTask("no-such-task"), /Task not found/);
      assert.deepEqual((await running).content, [{ type: "text", text: "quick result" }]);
      assert.equal(peer.serverEvents.filter((e) => e.type === "task-cancelled").length, 0);
    } finally {
      await peer.close();
    }
  });
});
