import assert from "node:assert/strict";
import { Client as Client2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Job, JobCancelledError } from "../../src/core/index.js";
import { cancellableMcpClient, type McpEvent } from "../../src/mcp/index.js";
import { isAlive } from "../support/bridge-harness.js";
import { fixturePath } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

type Line = "1.x" | "2.x";

/** A server fixture as a subprocess over stdio, its stderr lines collected. */
function serverProcess(line: Line, fixture: string, args: string[] = []) {
  const options = { command: process.execPath, args: [fixturePath(fixture), ...args], stderr: "pipe" as const };
  const transport = line === "1.x" ? new StdioClientTransport(options) : new Stdio2(options);
  const lines: string[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
  const line_ = (pattern: RegExp) => eventually(() => lines.find((l) => pattern.test(l)), String(pattern));
  return { transport, lines, line: line_ };
}

function bindingOf(line: Line, events: McpEvent[]) {
  const client = line === "1.x" ? new Client({ name: "c1", version: "1.0.0" }) : new Client2({ name: "c2", version: "2.4.0" });
  return cancellableMcpClient(client as unknown as Client, { onEvent: (event) => events.push(event) });
}

/** The shared check: Stop → tasks/cancel; the child process gone; `cancelled` at the answer and after; all settled. */
async function stopTheTask(mcp: ReturnType<typeof bindingOf>, events: McpEvent[], line: (p: RegExp) => Promise<string>) {
  const turn = new Job("turn");
  const call = mcp.callTool({ name: "build", arguments: {} }, { parent: turn, task: { ttl: 60_000 } });
  const [, taskId, , pid] = (await line(/^task \w+ child \d+$/)).split(" ");
  assert.ok(isAlive(Number(pid)));
  turn.cancel("session");
  await assert.rejects(call, JobCancelledError);
  const answer = events.find((e) => e.type === "task-cancel");
  assert.equal(answer?.type === "task-cancel" && answer.answer, "cancelled", `cancelled at the tasks/cancel answer: ${JSON.stringify(events)}`);
  await line(new RegExp(`^task ${taskId} ended SIGTERM$`));
  assert.equal(isAlive(Number(pid)), false, "the task's child process is gone");
  const status = await mcp.request<{ status: string }>({ method: "tasks/get", params: { taskId: taskId ?? "" } }, anyResult);
  assert.equal(status.status, "cancelled", "still cancelled after the work ended");
  const inFlight = await mcp.callTool({ name: "task_in_flight", arguments: {} });
  assert.deepEqual(inFlight.content, [{ type: "text", text: "0" }], "the server's task jobs settled");
  assert.equal(mcp.inFlight, 0);
  assert.equal(turn.childCount, 0);
}

const anyResult = { "safeParse": (data: unknown) => ({ success: true, data }), "~standard": { version: 1, vendor: "t", validate: (value: unknown) => ({ value }) } } as never;

describe("MCP tasks across processes: both SDK lines, stdio and Streamable HTTP (real servers as subprocesses)", () => {
  for (const line of ["1.x", "2.x"] as const) {
    it(`SDK ${line} client → 1.x task server over stdio: Stop cancels the task, its child process is gone, status cancelled`, async () => {
      const server = serverProcess(line, "mcp-task-server");
      const events: McpEvent[] = [];
      const mcp = bindingOf(line, events);
      await mcp.connect(server.transport as never);
      try {
        await stopTheTask(mcp, events, server.line);
      } finally {
        await mcp.client.close();
      }
    });
  }

  it("SDK 1.x client → 1.x task server over Streamable HTTP on loopback: the same", async () => {
    const server = serverProcess("1.x", "mcp-task-server", ["--http"]);
    const events: McpEvent[] = [];
    // The stdio transport only runs the process (and collects its stderr); the MCP session is over HTTP.
    await server.transport.start();
    const port = (await server.line(/^listening \d+$/)).split(" ")[1];
    const mcp = cancellableMcpClient(new Client({ name: "c1", version: "1.0.0" }), { onEvent: (event) => events.push(event) });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    try {
      await stopTheTask(mcp, events, server.line);
    } finally {
      await mcp.client.close();
      await server.transport.close();
    }
  });

  it("SDK 2.x client → 2.x server over stdio: the cancel stays notifications/cancelled, the handler's job is cancelled external", async () => {
    const server = serverProcess("2.x", "mcp2-server");
    const events: McpEvent[] = [];
    const mcp = bindingOf("2.x", events);
    await mcp.connect(server.transport as never);
    try {
      const turn = new Job("turn");
      const call = mcp.callTool({ name: "wait", arguments: {} }, { parent: turn });
      await server.line(/^mcp2 wait started$/);
      turn.cancel("session");
      await assert.rejects(call, JobCancelledError);
      await server.line(/^mcp2 wait aborted external$/);
      const inFlight = await mcp.callTool({ name: "in_flight", arguments: {} });
      assert.deepEqual(inFlight.content, [{ type: "text", text: "0" }]);
      assert.equal(mcp.inFlight, 0);
    } finally {
      await mcp.client.close();
    }
  });

  it("a rogue server over stdio whose task never ends: the call is cancelled at the grace, task-running reported, the connection goes on", async () => {
    const server = serverProcess("1.x", "mcp-rogue-task-server", ["never-terminal"]);
    const events: McpEvent[] = [];
    const mcp = cancellableMcpClient(new Client({ name: "c1", version: "1.0.0" }), { graceMs: 300, onEvent: (e) => events.push(e) });
    await mcp.connect(server.transport);
    try {
      const turn = new Job("turn");
      const call = mcp.callTool({ name: "work", arguments: {} }, { parent: turn, task: {} });
      await eventually(() => (events.some((e) => e.type === "task") ? true : undefined), "the task");
      turn.cancel("session");
      await assert.rejects(call, JobCancelledError);
      assert.ok(events.some((e) => e.type === "task-running"));
      assert.deepEqual((await mcp.callTool({ name: "echo", arguments: {} })).content, [{ type: "text", text: "echo" }]);
      assert.equal(mcp.inFlight, 0);
    } finally {
      await mcp.client.close();
    }
  });
});
