import assert from "node:assert/strict";
import { Job, JobCancelledError } from "../../src/core/index.js";
import { type McpPeer, startMcpPeer } from "./mcp-peer.js";

describe("MCP binding, server side: a tool handler's signal is part of the tree (real MCP servers over stdio)", () => {
  let peer: McpPeer | undefined;
  afterEach(async () => {
    await peer?.close();
    peer = undefined;
  });

  it("an MCP server that calls another MCP server with jobOf(extra): one cancel stops both tools", async () => {
    peer = await startMcpPeer();
    const turn = new Job("turn");
    const call = peer.mcp.callTool({ name: "chain", arguments: {} }, { parent: turn });
    await peer.waitForLine(/^mcp\.inner wait started$/, "the inner server's tool running");
    turn.cancel("session");
    await assert.rejects(call, JobCancelledError);
    // The top server's handler job was cancelled by notifications/cancelled, and so its child
    // (the call to the inner server), which sent notifications/cancelled of its own.
    await peer.waitForLine(/^mcp\.inner wait aborted external$/);
    await peer.waitForLine(/^mcp chain stopped AbortError$/);
    assert.deepEqual(await peer.serverInFlight(), { handlers: 0, inner: 0 });
  });

  it("an MCP server that is itself an ACP client: cancelling the tool call ends its ACP agent's turn cancelled", async () => {
    peer = await startMcpPeer();
    const stop = new AbortController();
    const call = peer.mcp.callTool({ name: "acp", arguments: {} }, { signal: stop.signal });
    await peer.waitForLine(/^mcp acp prompting$/, "the tool's ACP prompt on its way");
    stop.abort();
    await assert.rejects(call, JobCancelledError);
    await peer.waitForLine(/^mcp acp turn cancelled$/, "the ACP agent's turn ended cancelled");
    assert.deepEqual(await peer.serverInFlight(), { handlers: 0, inner: 0 });
  });

  it("a tool call that is not cancelled runs to its end with its job settled", async () => {
    peer = await startMcpPeer();
    const result = await peer.mcp.callTool({ name: "wait", arguments: { ms: 20 } });
    assert.deepEqual(result.content, [{ type: "text", text: "elapsed" }]);
    await peer.waitForLine(/^mcp wait finished$/);
    assert.deepEqual(await peer.serverInFlight(), { handlers: 0, inner: 0 });
  });
});
