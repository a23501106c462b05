import assert from "node:assert/strict";
import { cancellableStream, ndJsonStream } from "../../src/index.js";
import { collectLines, spawnFixture } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

type Line = Record<string, unknown>;

describe("acp-cancel's ndJsonStream (engine inline), in a real SDK agent over stdio", () => {
  it("answers bad lines (-32700, -32600 over the cap, -32600 for batches) and keeps the session", async () => {
    const peer = spawnFixture("sdk-agent", ["--inline"]);
    const received: Line[] = collectLines(peer.child.stdout);
    const send = (line: string) => peer.child.stdin.write(`${line}\n`);
    try {
      send("definitely not json");
      send(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "_test/echo" }]));
      send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}\r");
      const init = await eventually(() => received.find((m) => m.id === 2), "initialize answered (CRLF line)");
      assert.ok("result" in init);
      send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "_test/echo", params: {} }));
      assert.deepEqual((await eventually(() => received.find((m) => m.id === 3), "echo")).result, { ok: true });
      const errors = received.filter((m) => m.id === null).map((m) => (m.error as { code: number; message: string }));
      assert.deepEqual(errors.map((e) => e.code), [-32700, -32600]);
      assert.match(errors[0]?.message ?? "", /not valid JSON/);
      assert.match(errors[1]?.message ?? "", /batches are not supported/);
    } finally {
      peer.child.stdin.end();
      await peer.exited;
    }
  });
});

describe("cancellableStream given acp-cancel's ndJsonStream", () => {
  it("attaches the stream's own engine (the same stream back, no second layer); a second attach throws", async () => {
    const fromPeer = new TransformStream<Uint8Array, Uint8Array>();
    const toPeer = new TransformStream<Uint8Array, Uint8Array>();
    const stream = ndJsonStream(toPeer.writable, fromPeer.readable);
    const { stream: attached, cancellation } = cancellableStream(stream, { role: "agent" });
    assert.equal(attached, stream);
    const peer = fromPeer.writable.getWriter();
    await peer.write(new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "_test/echo", params: {} })}\n`));
    const app = attached.readable.getReader();
    assert.deepEqual((await app.read()).value, { jsonrpc: "2.0", id: 1, method: "_test/echo", params: {} });
    // The request went through the attached engine: it is in flight there.
    assert.equal(cancellation.engine.inFlight.client, 1);
    app.releaseLock();
    assert.throws(() => cancellableStream(stream, { role: "agent" }), /already has an engine attached/);
    await peer.close();
  });

  it("a copy of the stream with a tapped side ({ ...stream, readable }) still attaches inline, not wrapped", async () => {
    const fromPeer = new TransformStream<Uint8Array, Uint8Array>();
    const toPeer = new TransformStream<Uint8Array, Uint8Array>();
    const stream = ndJsonStream(toPeer.writable, fromPeer.readable);
    const seen: unknown[] = [];
    const tap = new TransformStream<unknown, unknown>({
      transform(message, controller) {
        seen.push(message);
        controller.enqueue(message);
      },
    });
    const copy = { ...stream, readable: stream.readable.pipeThrough(tap) };
    const { stream: attached, cancellation } = cancellableStream(copy, { role: "agent" });
    assert.equal(attached, copy);
    const peer = fromPeer.writable.getWriter();
    await peer.write(new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "_test/echo", params: {} })}\n`));
    const app = attached.readable.getReader();
    assert.deepEqual((await app.read()).value, { jsonrpc: "2.0", id: 7, method: "_test/echo", params: {} });
    assert.equal(seen.length, 1);
    // The engine inside the original stream saw the request: in flight there, not in a second layer.
    assert.equal(cancellation.engine.inFlight.client, 1);
    app.releaseLock();
    await peer.close();
  });
});

describe("acp-cancel's ndJsonStream: a long turn's output", () => {
  it("reaches the peer while the app is still writing (every 16 KB), each message once and in order", async () => {
    const total = 2000;
    let produced = 0;
    /** How many messages the app had written when each chunk reached the output. */
    const producedAtWrite: number[] = [];
    let text = "";
    // Completes each write on a nextTick, as a Node pipe's web stream does.
    const output = new WritableStream<Uint8Array>({
      write(chunk) {
        producedAtWrite.push(produced);
        text += Buffer.from(chunk).toString();
        return new Promise<void>((resolve) => process.nextTick(resolve));
      },
    });
    const stream = ndJsonStream(output, new ReadableStream<Uint8Array>());
    // The app writes from microtasks only, as the SDK does after one abort() of many requests.
    const writer = stream.writable.getWriter();
    for (let id = 0; id < total; id++) {
      await writer.write({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
      produced++;
    }
    const lines = await eventually(() => {
      const all = text.split("\n").slice(0, -1);
      return all.length >= total ? all : undefined;
    }, "every message written");
    const ids = lines.map((line) => (JSON.parse(line) as { params: { requestId: number } }).params.requestId);
    assert.deepEqual(ids, Array.from({ length: total }, (_, id) => id));
    assert.ok(producedAtWrite.length > 2, `${producedAtWrite.length} writes`);
    assert.ok((producedAtWrite[1] ?? total) < total / 2, `second write after ${producedAtWrite[1]} of ${total} messages`);
  });
});
