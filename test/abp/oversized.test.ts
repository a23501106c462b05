/**
 * Issue 25 item 16: a call over the size limit settles at once, with the cause. The agent
 * refuses what is over its own limit before sending; when the app's limit is the smaller one,
 * the app's MESSAGE_TOO_LARGE names the call it refuses (`inReplyTo`), and the call settles on
 * it. The app is the real app module (AbpApp behind its EnvelopeHost) on a real WebSocket.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { AbpApp } from "../../src/abp/app/abp-app.js";
import { EnvelopeHost } from "../../src/abp/app/envelope-host.js";
import { LIMITS, messageSize } from "../../src/abp/app/protocol.js";
import { checkAgentMessage, envelopeIdOf } from "../../src/abp/app/validate.js";
import { AbpClient, AbpProtocolError, webSocketTransport } from "../../src/abp/index.js";

describe("ABP: a call over the size limit (issue 25 item 16)", () => {
  let server: WebSocketServer;
  let appSocket: WebSocket;
  let client: AbpClient;
  const refusals: string[] = [];

  beforeEach(async () => {
    refusals.length = 0;
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", resolve));
    const accepted = new Promise<WebSocket>((resolve) => server.once("connection", resolve));
    appSocket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await new Promise((resolve) => appSocket.once("open", resolve));
    const app = new AbpApp({ app: { id: "unit", name: "unit", version: "1" }, capabilities: { echo: (params) => params } });
    const host = new EnvelopeHost(app, { onReject: (rejection) => refusals.push(rejection.code) });
    appSocket.on("message", (data) => host.receive(String(data), (envelope) => appSocket.send(JSON.stringify(envelope))));
    // The agent allows 4 MiB; the app, its default 1 MiB.
    client = new AbpClient(webSocketTransport(await accepted, { maxMessageBytes: 4 * 2 ** 20 }), { graceMs: 100 });
    await client.initialize();
  });

  afterEach(async () => {
    await client.close();
    appSocket.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("the app's MESSAGE_TOO_LARGE carries inReplyTo, so the call settles at once with the app's words", async () => {
    const call = client.call("echo", { blob: "x".repeat(1.5 * 2 ** 20) }, { callId: "big-1" });
    await assert.rejects(call, (error: AbpProtocolError) =>
      error instanceof AbpProtocolError &&
      error.code === "MESSAGE_TOO_LARGE" &&
      error.message === `the app refused the capabilities/call: message is over the size limit of ${LIMITS.maxMessageBytes} bytes`);
    assert.deepEqual(refusals, ["MESSAGE_TOO_LARGE"]);
    assert.equal(client.calls.size, 0);
    // The app and the channel survive.
    assert.deepEqual(await client.call("echo", { small: true }, { callId: "small-1" }), { success: true, data: { small: true }, callId: "small-1" });
  });

  it("sizes are UTF-8 bytes of the JSON text: 600,000 'é' (1.2 MB) is refused by the app's 1 MiB limit", async () => {
    const call = client.call("echo", { blob: "é".repeat(600_000) }, { callId: "wide-1" });
    await assert.rejects(call, (error: AbpProtocolError) => error instanceof AbpProtocolError && error.code === "MESSAGE_TOO_LARGE");
    assert.deepEqual(refusals, ["MESSAGE_TOO_LARGE"]);
    assert.equal(client.calls.size, 0);
  });

  it("messageSize counts strings and keys as JSON.stringify writes them in UTF-8, text and clone alike", () => {
    const samples = ["plain", "é", "€", "😀", "\u0001", "\n\t", '"quoted"', "back\\slash", "\u2028", "\ud800 lone", "mixé😀\u0000"];
    for (const blob of samples) {
      const text = JSON.stringify({ blob });
      // A clone counts all but the braces of its JSON text; a text message counts every byte.
      assert.equal(messageSize({ blob }), Buffer.byteLength(text) - 2, JSON.stringify(blob));
      assert.equal(messageSize(text), Buffer.byteLength(text), JSON.stringify(blob));
    }
    assert.equal(messageSize({ kééé: "v" }), Buffer.byteLength(JSON.stringify({ kééé: "v" })) - 2);
    // The agent's own check: 600,000 'é' is over 1 MiB as an envelope object, as is 300,000 \u0001 (6 bytes each).
    for (const blob of ["é".repeat(600_000), "\u0001".repeat(300_000)]) {
      const envelope = { type: "capabilities/call", id: "c1", timestamp: 1, payload: { name: "echo", params: { blob } } };
      assert.ok(messageSize(envelope, LIMITS.maxMessageBytes) > LIMITS.maxMessageBytes);
    }
    assert.ok(messageSize({ blob: "é".repeat(500_000) }) < LIMITS.maxMessageBytes);
  });

  it("the id is read from the start of an oversized envelope (text or clone), never from inside its payload", () => {
    const big = "x".repeat(LIMITS.maxMessageBytes);
    const text = JSON.stringify({ type: "capabilities/call", id: "c1-7", timestamp: 1, payload: { blob: big } });
    const checked = checkAgentMessage(text);
    assert.equal(checked.ok, false);
    assert.equal(!checked.ok && checked.id, "c1-7");
    assert.equal(envelopeIdOf({ type: "capabilities/call", id: "c1-8", payload: { blob: big } }), "c1-8");
    assert.equal(envelopeIdOf(JSON.stringify({ payload: { id: "inner" }, id: "late" })), undefined);
    assert.equal(envelopeIdOf(JSON.stringify({ type: "capabilities/call", id: "", payload: {} })), undefined);
    assert.equal(envelopeIdOf(`{"type":"capabilities/call","id":"${"i".repeat(LIMITS.maxIdLength + 1)}"}`), undefined);
  });
});
