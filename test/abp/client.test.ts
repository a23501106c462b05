/**
 * AbpClient against a real WebSocket peer in Node that answers only what a test tells it to: the
 * agent side's own duties (grace, shutdown, job tree, ids, closing) without a browser. Every
 * envelope the client sends is checked with the page's own validator.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import type { Envelope } from "../../src/abp/app/protocol.js";
import { checkAgentMessage } from "../../src/abp/app/validate.js";
import { AbpClient, AbpClosedError, AbpProtocolError, webSocketTransport } from "../../src/abp/index.js";
import { Job } from "../../src/core/index.js";
import { eventually } from "../support/wire-assertions.js";

interface Peer {
  received: Envelope[];
  socket: WebSocket;
  send(envelope: Omit<Envelope, "timestamp">): void;
}

describe("AbpClient (agent side) against a WebSocket peer that answers only when told", () => {
  let server: WebSocketServer;
  let peer: Peer;
  let client: AbpClient;

  beforeEach(async () => {
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", resolve));
    const accepted = new Promise<WebSocket>((resolve) => server.once("connection", resolve));
    const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await new Promise((resolve) => socket.once("open", resolve));
    const appEnd = await accepted;
    const received: Envelope[] = [];
    appEnd.on("message", (data) => {
      const checked = checkAgentMessage(String(data));
      assert.ok(checked.ok, `the client sent a valid envelope: ${String(data)}`);
      received.push(checked.message as Envelope);
    });
    peer = { received, socket: appEnd, send: (e) => appEnd.send(JSON.stringify({ ...e, timestamp: Date.now() })) };
    client = new AbpClient(webSocketTransport(socket), { graceMs: 100 });
  });

  afterEach(async () => {
    await client.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const sent = (type: string) => peer.received.filter((e) => e.type === type);

  it("a cancel the app never answers settles the call after the grace period, marked unconfirmed", async () => {
    const stop = new AbortController();
    const call = client.call("render", {}, { signal: stop.signal, callId: "deaf-1" });
    await eventually(() => sent("capabilities/call")[0], "the call");
    stop.abort();
    assert.deepEqual(await call, { success: false, cancelled: true, callId: "deaf-1", cancelledBy: "abort", unconfirmed: true });
    assert.deepEqual(sent("capabilities/cancel").map((e) => e.payload), [{ callId: "deaf-1" }]);
    assert.equal(client.calls.size, 0);
  });

  it("cancel() of a call the app never acknowledges (it stopped reading): settles within the grace, nothing left pending", async function () {
    this.timeout(10_000); // a hang fails here
    const call = client.call("render", {}, { callId: "deaf-2" });
    await eventually(() => sent("capabilities/call")[0], "the call");
    const appSocket = (peer.socket as unknown as { _socket: import("node:net").Socket })._socket;
    appSocket.pause(); // the app stops reading
    try {
      const cancel = client.cancel("deaf-2", "user pressed Stop");
      assert.deepEqual(await call, { success: false, cancelled: true, callId: "deaf-2", cancelledBy: "cancel", unconfirmed: true });
      const unacknowledged = (error: Error) =>
        error instanceof AbpClosedError && /no acknowledgement within the grace/.test(error.message);
      await assert.rejects(cancel, unacknowledged);
      assert.equal((client.transport as ReturnType<typeof webSocketTransport>).pendingCount, 0);
    } finally {
      appSocket.destroy(); // a paused socket never sees the close: the server's close would wait for it
    }
  });

  it("the app's late answer after the grace period is dropped: the call settled once", async () => {
    const stop = new AbortController();
    const call = client.call("render", {}, { signal: stop.signal, callId: "late-1" });
    const request = await eventually(() => sent("capabilities/call")[0], "the call");
    stop.abort();
    const settled = await call;
    peer.send({ type: "capabilities/call-result", id: request.id ?? "", payload: { success: true, data: 1 } });
    assert.equal(settled.unconfirmed, true);
    // The channel still works after the late answer.
    const next = client.call("echo", {}, { callId: "next-1" });
    const second = await eventually(() => sent("capabilities/call")[1], "the second call");
    peer.send({ type: "capabilities/call-result", id: second.id ?? "", payload: { success: true, data: 2 } });
    assert.deepEqual(await next, { success: true, data: 2, callId: "next-1" });
  });

  it("a timeout sends the same cancel as an abort (no reason that would tell them apart)", async () => {
    const call = client.call("render", {}, { timeout: 20, callId: "slow-1" });
    const cancel = await eventually(() => sent("capabilities/cancel")[0], "the cancel");
    assert.deepEqual(cancel.payload, { callId: "slow-1" });
    assert.equal((sent("capabilities/call")[0]?.payload as { options?: unknown }).options, undefined, "the timeout is not sent to the app");
    peer.send({ type: "capabilities/cancel-result", id: cancel.id ?? "", payload: { callId: "slow-1", cancelled: true } });
    const request = sent("capabilities/call")[0];
    peer.send({ type: "capabilities/call-result", id: request?.id ?? "", payload: { success: false, cancelled: true } });
    assert.deepEqual(await call, { success: false, cancelled: true, callId: "slow-1", cancelledBy: "timeout" });
  });

  it("shutdown settles every pending call at once, sends one shutdown and no cancels", async () => {
    const calls = ["a", "b", "c"].map((id) => client.call("wait", {}, { callId: id }));
    await eventually(() => (sent("capabilities/call").length === 3 ? true : undefined), "three calls");
    await client.shutdown("done");
    const results = await Promise.all(calls);
    assert.deepEqual(results.map((r) => [r.callId, r.cancelled, r.cancelledBy]), [
      ["a", true, "shutdown"],
      ["b", true, "shutdown"],
      ["c", true, "shutdown"],
    ]);
    await eventually(() => sent("shutdown")[0], "the shutdown");
    assert.deepEqual(sent("shutdown")[0]?.payload, { reason: "done" });
    assert.equal(sent("capabilities/cancel").length, 0);
    assert.equal(client.calls.size, 0);
  });

  it("a call is a job of the tree: cancelling its parent (of any binding) cancels it, and the parent waits for it", async () => {
    const turn = new Job({ kind: "an ACP prompt turn" });
    const call = client.call("render", {}, { parent: turn, callId: "child-1" });
    assert.equal(turn.childCount, 1);
    const request = await eventually(() => sent("capabilities/call")[0], "the call");
    turn.cancel("session");
    const cancel = await eventually(() => sent("capabilities/cancel")[0], "the cancel");
    assert.deepEqual(cancel.payload, { callId: "child-1" });
    assert.equal(turn.childCount, 1, "the child is not settled before the app answers");
    peer.send({ type: "capabilities/call-result", id: request.id ?? "", payload: { success: false, cancelled: true } });
    assert.deepEqual(await call, { success: false, cancelled: true, callId: "child-1", cancelledBy: "parent" });
    assert.equal(turn.childCount, 0);
  });

  it("generates a UUID callId when none is given; a duplicate callId in flight is refused; a pre-aborted call is never sent", async () => {
    void client.call("wait");
    const first = await eventually(() => sent("capabilities/call")[0], "the call");
    const callId = (first.payload as { callId: string }).callId;
    assert.match(callId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await assert.rejects(client.call("wait", {}, { callId }), (error: AbpProtocolError) => error.code === "DUPLICATE_CALL_ID");
    const result = await client.call("wait", {}, { signal: AbortSignal.abort(), callId: "never-sent" });
    assert.deepEqual(result, { success: false, cancelled: true, callId: "never-sent", cancelledBy: "abort" });
    assert.equal(sent("capabilities/call").length, 1);
  });

  it("the socket closing rejects every pending call with an AbpClosedError naming why", async () => {
    const calls = [client.call("wait", {}, { callId: "x" }), client.call("wait", {}, { callId: "y" })];
    await eventually(() => (sent("capabilities/call").length === 2 ? true : undefined), "two calls");
    peer.socket.close(4000, "app went away");
    for (const call of calls) {
      await assert.rejects(call, (error: Error) => error instanceof AbpClosedError && error.message === "the WebSocket closed (code 4000, app went away)");
    }
    assert.equal(client.calls.size, 0);
    await assert.rejects(client.call("wait"), AbpClosedError);
  });

  it("an app's error notification about a request fails that request with the app's words", async () => {
    const init = client.initialize();
    const request = await eventually(() => sent("initialize")[0], "initialize");
    peer.send({
      type: "notification",
      payload: { event: "error", error: { code: "INVALID_MESSAGE", message: "initialize payload.agent must be {name, version} strings" }, inReplyTo: request.id ?? "" },
    });
    await assert.rejects(init, (error: AbpProtocolError) =>
      error.code === "INVALID_MESSAGE" && error.message === "the app refused the initialize: initialize payload.agent must be {name, version} strings");
  });

  it("a call over the size limit is refused at once with an AbpProtocolError naming the limit, and nothing is sent (issue 25 item 16)", async () => {
    const call = client.call("echo", { blob: "x".repeat(1.5 * 2 ** 20) }, { callId: "huge-1" });
    await assert.rejects(call, (error: AbpProtocolError) =>
      error instanceof AbpProtocolError && error.code === "MESSAGE_TOO_LARGE" && error.message.includes(`${2 ** 20} bytes`));
    assert.equal(client.calls.size, 0);
    // The channel carries on: the next call goes out, and the oversized one never did.
    void client.call("wait", {}, { callId: "after-huge" });
    await eventually(() => sent("capabilities/call")[0], "the next call");
    assert.deepEqual(sent("capabilities/call").map((e) => (e.payload as { callId: string }).callId), ["after-huge"]);
  });

  it("after the grace nothing of a settled call stays in the transport: 10,000 calls the app never answers leave no request pending (issue 25 item 17)", async function () {
    this.timeout(120_000);
    const transport = client.transport as ReturnType<typeof webSocketTransport>;
    const quick = new AbpClient(transport, { graceMs: 5 });
    for (let batch = 0; batch < 10; batch++) {
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 1000; i++) {
        const stop = new AbortController();
        calls.push(quick.call("render", {}, { signal: stop.signal, callId: `deaf-${batch}-${i}` }));
        stop.abort();
      }
      const results = (await Promise.all(calls)) as { unconfirmed?: true }[];
      assert.ok(results.every((r) => r.unconfirmed === true), "each settled here, unconfirmed");
    }
    assert.equal(quick.calls.size, 0);
    // Each call's request and its cancel: both forgotten once the grace passed (was 20,000).
    await eventually(() => (transport.pendingCount === 0 ? true : undefined), "no request pending in the transport");
    await eventually(() => (sent("capabilities/cancel").length === 10_000 ? true : undefined), "every cancel reached the app");
  });
});
