import assert from "node:assert/strict";
import { Job, JobCancelledError } from "../../src/core/index.js";
import type { McpEvent } from "../../src/mcp/index.js";
import { type McpPeer, sentId, startMcpPeer } from "./mcp-peer.js";
import { eventually } from "../support/wire-assertions.js";
import { withReports } from "../core/report-capture.js";

/** Rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

describe("MCP binding, client side: requests as children of the job tree (real MCP server over stdio)", () => {
  let peer: McpPeer | undefined;
  afterEach(async () => {
    await peer?.close();
    peer = undefined;
  });

  it("cancelling the parent sends the SDK's notifications/cancelled once, the tool's handler signal aborts, the call rejects with the parent's reason", async () => {
    const events: McpEvent[] = [];
    peer = await startMcpPeer([], { onEvent: (event) => events.push(event) });
    const p = peer;
    const turn = new Job("an ACP prompt turn");
    const call = peer.mcp.callTool({ name: "wait", arguments: {} }, { parent: turn });
    await peer.waitForLine(/^mcp wait started$/);
    assert.equal(turn.childCount, 1, "the call is a child of the turn");
    turn.cancel("session");
    const error = await rejection(call);
    assert.ok(error instanceof JobCancelledError);
    assert.equal(error.reason, "session");
    assert.deepEqual(peer.cancels().map((c) => c.requestId), [sentId(peer, "tools/call")]);
    await peer.waitForLine(/^mcp wait aborted external$/, "the server's handler job cancelled by notifications/cancelled");
    assert.equal(turn.childCount, 0, "the child settled");
    assert.equal(peer.mcp.inFlight, 0);
    assert.deepEqual(await peer.serverInFlight(), { handlers: 0, inner: 0 });
    assert.deepEqual(
      events
        .filter((e) => "method" in e && e.method === "tools/call")
        .map((e) => (e.type === "settled" ? `${e.type}:${e.outcome}` : e.type)),
      ["sent", "cancel", "settled:cancelled"],
    );
    // The server sent no response for the cancelled request (MCP's rule), and nothing was answered twice.
    const answered = peer.received.filter((m) => "id" in m && m.id === sentId(p, "tools/call"));
    assert.deepEqual(answered, []);
  });

  it("an onEvent listener that throws breaks nothing: both calls under a cancelled turn reject with its reason, a call is answered, the throws are reported", async () => {
    let throwing = false;
    peer = await startMcpPeer([], {
      onEvent: (event) => {
        if (throwing) throw new Error(`listener broke on ${event.type}`);
      },
    });
    const p = peer;
    const outcomes: string[] = [];
    const reported = await withReports(async () => {
      throwing = true;
      const answered = await p.mcp.callTool({ name: "echo", arguments: { text: "hi" } });
      assert.deepEqual(answered.content, [{ type: "text", text: "hi" }]);
      const turn = new Job("turn");
      const calls = [1, 2].map(() => p.mcp.callTool({ name: "wait", arguments: {} }, { parent: turn }));
      turn.cancel("session");
      for (const settled of await Promise.allSettled(calls)) {
        const error: unknown = settled.status === "rejected" ? settled.reason : "answered";
        outcomes.push(error instanceof JobCancelledError ? error.reason : String(error));
      }
    });
    assert.deepEqual(outcomes, ["session", "session"]);
    assert.equal(p.mcp.inFlight, 0);
    const messages = reported.map((e) => (e as Error).message);
    for (const type of ["sent", "settled", "cancel"]) assert.ok(messages.includes(`listener broke on ${type}`), type);
  });

  it("a call that finishes first is answered normally; a later cancel of the parent sends nothing", async () => {
    peer = await startMcpPeer();
    const turn = new Job("turn");
    const result = await peer.mcp.callTool({ name: "echo", arguments: { text: "hi" } }, { parent: turn });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
    assert.equal(turn.childCount, 0);
    turn.cancel("session");
    assert.deepEqual(peer.cancels(), []);
  });

  it("the signal option: aborting it cancels the call the same way (reason external)", async () => {
    peer = await startMcpPeer();
    const stop = new AbortController();
    const call = peer.mcp.callTool({ name: "wait", arguments: {} }, { signal: stop.signal });
    await peer.waitForLine(/wait started/);
    stop.abort();
    const error = await rejection(call);
    assert.ok(error instanceof JobCancelledError);
    assert.equal(error.reason, "external");
    assert.equal(peer.cancels().length, 1);
    await peer.waitForLine(/wait aborted/);
    assert.equal(peer.mcp.inFlight, 0);
  });

  it("nothing is sent under a parent that is already being cancelled", async () => {
    peer = await startMcpPeer();
    const turn = new Job("turn");
    const nested = new Job("nested", turn);
    turn.cancel("deadline");
    const error = await rejection(peer.mcp.callTool({ name: "echo", arguments: { text: "x" } }, { parent: nested }));
    assert.ok(error instanceof JobCancelledError);
    assert.equal(error.reason, "deadline");
    assert.equal(sentId(peer, "tools/call"), undefined, "no tools/call left the client");
    assert.equal(peer.mcp.inFlight, 0);
  });

  it("an SDK server whose tool ignores its signal: the client stopped waiting at the cancel, the server sends nothing late", async () => {
    peer = await startMcpPeer();
    const turn = new Job("turn");
    const call = peer.mcp.callTool({ name: "stubborn", arguments: { ms: 300 } }, { parent: turn });
    await peer.waitForLine(/stubborn started/);
    turn.cancel("session");
    assert.ok((await rejection(call)) instanceof JobCancelledError);
    assert.equal(turn.childCount, 0, "the sender stopped waiting when the SDK sent the cancel");
    await peer.waitForLine(/stubborn finished/);
    assert.deepEqual(await peer.serverInFlight(), { handlers: 0, inner: 0 });
    const id = sentId(peer, "tools/call");
    assert.ok(!peer.received.some((m) => "id" in m && m.id === id), "no response to the cancelled call");
  });

  it("a server that answers the cancelled request anyway: the late response is ignored, the caller answered once, the client keeps working", async () => {
    peer = await startMcpPeer([], { fixture: "mcp-late-server" });
    const p = peer;
    const turn = new Job("turn");
    let settlements = 0;
    const call = peer.mcp.callTool({ name: "any", arguments: {} }, { parent: turn }).finally(() => {
      settlements++;
    });
    await peer.waitForLine(/late tools\/call started/);
    turn.cancel("session");
    assert.ok((await rejection(call)) instanceof JobCancelledError);
    await peer.waitForLine(/late got notifications\/cancelled 1/);
    const id = sentId(peer, "tools/call");
    await eventually(() => (p.received.some((m) => "id" in m && m.id === id) ? true : undefined), "the late response");
    await eventually(() => (p.errors.length > 0 ? true : undefined), "the SDK's report of it");
    assert.match(String(peer.errors[0]?.message), /unknown message ID/);
    assert.equal(settlements, 1);
    const next = await peer.mcp.callTool({ name: "any", arguments: {} });
    assert.deepEqual(next.content, [{ type: "text", text: "late anyway" }]);
    assert.equal(peer.mcp.inFlight, 0);
    assert.equal(turn.childCount, 0);
  });

  it("initialize is never cancelled: under a cancelled parent the handshake is waited for up to the grace, then given up and the client closed", async () => {
    peer = await startMcpPeer(["--init-delay-ms", "1500"], { connect: false, graceMs: 200 });
    const p = peer;
    const turn = new Job("turn");
    let closed = false;
    peer.client.onclose = () => {
      closed = true;
    };
    const connecting = peer.mcp.connect(peer.transport, { parent: turn });
    await eventually(() => (sentId(p, "initialize") !== undefined ? true : undefined), "initialize sent");
    turn.cancel("session");
    const error = await rejection(connecting);
    assert.ok(error instanceof JobCancelledError);
    assert.deepEqual(peer.cancels(), [], "no notifications/cancelled for initialize");
    assert.equal(turn.childCount, 0);
    assert.equal(peer.mcp.inFlight, 0);
    await eventually(() => (closed ? true : undefined), "the client closed");
  });

  it("initialize that completes within the grace after the cancel: not cancelled on the wire, the call ends at completion (not at the grace), cancelled, and the client is closed", async () => {
    peer = await startMcpPeer(["--init-delay-ms", "300"], { connect: false, graceMs: 60_000 });
    const p = peer;
    const turn = new Job("turn");
    const events: string[] = [];
    peer.client.onclose = () => events.push("closed");
    const connecting = peer.mcp.connect(peer.transport, { parent: turn });
    await eventually(() => (sentId(p, "initialize") !== undefined ? true : undefined), "initialize sent");
    turn.cancel("session");
    const error = await rejection(connecting);
    assert.ok(error instanceof JobCancelledError);
    assert.ok(
      peer.received.some((m) => "id" in m && m.id === sentId(p, "initialize") && "result" in m),
      "the handshake completed before the call ended: it ended well before the 60 s grace",
    );
    assert.deepEqual(peer.cancels(), []);
    assert.equal(peer.mcp.inFlight, 0);
    await eventually(() => (events.includes("closed") ? true : undefined), "the client closed");
  });
});
