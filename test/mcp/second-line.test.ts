import assert from "node:assert/strict";
import { Job, JobCancelledError } from "../../src/core/index.js";
import type { McpEvent } from "../../src/mcp/index.js";
import { eventually } from "../support/wire-assertions.js";
import { secondLineHttpClient, secondLineHttpServer } from "./second-line-peer.js";

describe("MCP 2026 (SDK 2.x): the binding on @modelcontextprotocol/client and server", () => {
  it("Streamable HTTP on loopback: a parent cancel closes the request's stream, the 2.x server's scoped handler job is cancelled", async () => {
    const server = await secondLineHttpServer();
    const events: McpEvent[] = [];
    const { mcp, client, posted } = await secondLineHttpClient(server.url, events);
    try {
      assert.equal(client.getProtocolEra(), "modern", "the 2026-07-28 protocol");
      const turn = new Job("turn");
      const call = mcp.callTool({ name: "wait", arguments: {} }, { parent: turn });
      await eventually(() => (server.tool.started === 1 ? true : undefined), "the tool running");
      turn.cancel("session");
      await assert.rejects(call, JobCancelledError);
      await eventually(() => (server.tool.stopped.length === 1 ? true : undefined), "the tool's job cancelled");
      assert.deepEqual(server.tool.stopped, ["external"], "a stream closed by the client is its cancel, not a shutdown");
      assert.ok(posted.includes("tools/call"), "the tap sees the POSTs");
      assert.ok(!posted.includes("notifications/cancelled"), `no cancel notification POSTed (${posted.join(", ")})`);
      assert.equal(mcp.inFlight, 0);
      assert.deepEqual((await mcp.callTool({ name: "echo", arguments: {} })).content, [{ type: "text", text: "echo" }]);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
