import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type AnyJob, Job, JobCancelledError } from "../../src/core/index.js";
import { withCancellation } from "../../src/index.js";
import { jobOf, type McpEvent, scopeMcpHandlers } from "../../src/mcp/index.js";
import { spawnFixture } from "../support/spawn-peer.js";
import { type McpPeer, startMcpPeer } from "./mcp-peer.js";
import { settle } from "../support/jobs.js";

/**
 * A real SDK McpServer and Client linked by the SDK's own in-memory transport pair, with a `hold`
 * tool whose handler starts a child job and waits for its signal.
 */
async function heldTool() {
  const server = new McpServer({ name: "held", version: "1.0.0" });
  const events: McpEvent[] = [];
  const scope = scopeMcpHandlers(server, { onEvent: (event) => events.push(event) });
  const jobs: { handler?: AnyJob | undefined; child?: Job } = {};
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => (started = resolve));
  server.registerTool("hold", {}, async (extra) => {
    jobs.handler = jobOf(extra);
    jobs.child = new Job("nested work", jobs.handler);
    started();
    await new Promise((resolve) => jobs.child?.signal.addEventListener("abort", resolve, { once: true }));
    settle(jobs.child);
    return { content: [{ type: "text" as const, text: "stopped" }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "held-client", version: "1.0.0" });
  await client.connect(clientSide);
  return { server, client, scope, events, jobs, running };
}

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

  describe("why a handler was stopped reaches its subtree (issue 25, item 18)", () => {
    it("the connection closing stops a scoped handler and its children with reason shutdown", async () => {
      const held = await heldTool();
      const call = held.client.callTool({ name: "hold", arguments: {} });
      await held.running;
      assert.equal(held.scope.inFlight, 1);
      await held.client.close();
      await assert.rejects(call, /Connection closed/);
      assert.equal(held.jobs.handler?.reason, "shutdown");
      assert.equal(held.jobs.child?.reason, "shutdown", "down the tree");
      assert.deepEqual(
        held.events.map((e) => (e.type === "handler-cancelled" ? [e.type, e.method, e.reason] : [e.type])),
        [["handler-cancelled", "tools/call", "shutdown"]],
      );
      await held.server.close();
    });

    it("the peer's notifications/cancelled still stops it with reason external", async () => {
      const held = await heldTool();
      const stop = new AbortController();
      const call = held.client.callTool({ name: "hold", arguments: {} }, undefined, { signal: stop.signal });
      await held.running;
      stop.abort("the user stopped it");
      await assert.rejects(call);
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => held.scope.inFlight === 0 && (clearInterval(poll), resolve()), 5);
      });
      assert.equal(held.jobs.handler?.reason, "external");
      assert.equal(held.jobs.child?.reason, "external");
      await held.client.close();
      await held.server.close();
    });
  });

  it("a handler that returns leaving work pending under jobOf(extra): that work is cancelled (internal) when it answers (issue 36)", async () => {
    const server = new McpServer({ name: "leaves-work", version: "1.0.0" });
    const scope = scopeMcpHandlers(server);
    let left: Job | undefined;
    server.registerTool("leave", {}, (extra) => {
      left = new Job("background work", jobOf(extra));
      return { content: [{ type: "text" as const, text: "answered" }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "leave-client", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const result = await client.callTool({ name: "leave", arguments: {} });
      assert.deepEqual(result.content, [{ type: "text", text: "answered" }]);
      assert.equal(scope.inFlight, 0);
      assert.equal(left?.parent?.isSettled, true, "the handler's job settled");
      assert.equal(left?.reason, "internal", "the work it left pending was cancelled, not orphaned");
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a scoped tool hands its cancel to an ACP client as cancellationSignal: extra.signal (as docs/cross-protocol.md shows)", async () => {
    const server = new McpServer({ name: "acp-bridge-tool", version: "1.0.0" });
    const scope = scopeMcpHandlers(server);
    const agent = spawnFixture("sdk-agent");
    let prompting: () => void = () => {};
    let stopReason: string | undefined;
    const prompted = new Promise<void>((resolve) => (prompting = resolve));
    server.registerTool("ask-agent", {}, async (extra) => {
      const app = withCancellation(acp.client({ name: "mcp-tool-as-acp-client" }));
      stopReason = await app.connectWith(acp.ndJsonStream(agent.output, agent.input), async (peer) => {
        await peer.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        const { sessionId } = await peer.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
        const turn = peer.request(
          acp.methods.agent.session.prompt,
          { sessionId, prompt: [{ type: "text", text: "throw-on-abort" }] },
          { cancellationSignal: extra.signal },
        );
        prompting();
        return (await turn).stopReason;
      });
      return { content: [{ type: "text" as const, text: stopReason }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "editor", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const stop = new AbortController();
      const call = client.callTool({ name: "ask-agent", arguments: {} }, undefined, { signal: stop.signal });
      await prompted;
      stop.abort();
      await assert.rejects(call);
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => scope.inFlight === 0 && (clearInterval(poll), resolve()), 5);
      });
      assert.equal(stopReason, "cancelled", "the ACP agent's turn ended cancelled");
    } finally {
      await client.close();
      await server.close();
      agent.child.stdin.end();
      await agent.exited;
    }
  });
});
