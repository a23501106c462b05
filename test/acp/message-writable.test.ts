import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { type MessageSink, MessageWritable } from "../../src/acp/message-writable.js";
import { withCancellation } from "../../src/index.js";

/** A sink that records what reaches it. */
function recordingSink(failOn?: unknown) {
  const log: unknown[] = [];
  const sink: MessageSink = {
    write(message) {
      if (message === failOn) throw new Error("sink refused");
      log.push(message);
    },
    close() {
      log.push("close");
    },
    abort(reason) {
      log.push(`abort: ${String(reason)}`);
    },
  };
  return { log, sink };
}

/** As the SDK writes: one writer per message, each write after the previous one settled. */
async function writeAsTheSdkDoes(stream: WritableStream<unknown>, message: unknown): Promise<void> {
  const writer = stream.getWriter();
  try {
    await writer.write(message);
  } finally {
    writer.releaseLock();
  }
}

describe("MessageWritable (the stream an SDK app writes to, in front of the engine)", () => {
  it("hands each message to the sink at once, in order, with a writer per message", async () => {
    const { log, sink } = recordingSink();
    const stream = new MessageWritable(sink);
    const writer = stream.getWriter();
    const first = writer.write(1);
    assert.deepEqual(log, [1], "the sink has the message before the write settles");
    await first;
    writer.releaseLock();
    for (let i = 2; i <= 5; i++) await writeAsTheSdkDoes(stream, i);
    assert.deepEqual(log, [1, 2, 3, 4, 5]);
    assert.equal(stream.locked, false);
  });

  it("is locked while a writer is held; a released writer refuses, and its closed promise rejects", async () => {
    const { log, sink } = recordingSink();
    const stream = new MessageWritable(sink);
    const writer = stream.getWriter();
    assert.equal(stream.locked, true);
    assert.throws(() => stream.getWriter(), TypeError);
    await assert.rejects(stream.close(), TypeError);
    await assert.rejects(stream.abort("x"), TypeError);
    const closed = writer.closed;
    writer.releaseLock();
    await assert.rejects(closed, TypeError);
    await assert.rejects(writer.write("late"), TypeError);
    assert.throws(() => writer.desiredSize, TypeError);
    assert.equal(stream.locked, false);
    assert.deepEqual(log, []);
  });

  it("closes once, after the writes before it; writes after a close are refused", async () => {
    const { log, sink } = recordingSink();
    const stream = new MessageWritable(sink);
    const writer = stream.getWriter();
    const closed = writer.closed;
    void writer.write("a");
    const closing = writer.close();
    await assert.rejects(writer.write("b"), TypeError);
    await closing;
    await closed;
    assert.equal(writer.desiredSize, 0);
    assert.deepEqual(log, ["a", "close"]);
    writer.releaseLock();
    await assert.rejects(writeAsTheSdkDoes(stream, "c"), TypeError);
    await assert.rejects(stream.close(), TypeError);
    assert.deepEqual(log, ["a", "close"]);
  });

  it("passes an abort to the sink with its reason and fails the writer's closed promise", async () => {
    const { log, sink } = recordingSink();
    const stream = new MessageWritable(sink);
    const writer = stream.getWriter();
    const closed = writer.closed;
    await writer.abort("gone");
    await assert.rejects(closed, (error) => error === "gone");
    await assert.rejects(writer.write("late"), (error) => error === "gone");
    assert.equal(writer.desiredSize, null);
    assert.deepEqual(log, ["abort: gone"]);
  });

  it("close() and abort() on the stream itself reach the sink", async () => {
    const closing = recordingSink();
    await new MessageWritable(closing.sink).close();
    assert.deepEqual(closing.log, ["close"]);
    const aborting = recordingSink();
    await new MessageWritable(aborting.sink).abort("stop");
    assert.deepEqual(aborting.log, ["abort: stop"]);
  });

  it("a sink that throws fails the write and the stream: later writes are refused", async () => {
    const { log, sink } = recordingSink("bad");
    const stream = new MessageWritable(sink);
    await writeAsTheSdkDoes(stream, "ok");
    await assert.rejects(writeAsTheSdkDoes(stream, "bad"), /sink refused/);
    await assert.rejects(writeAsTheSdkDoes(stream, "after"), /sink refused/);
    assert.deepEqual(log, ["ok"]);
  });

  it("can be piped into: every message in order, then the close", async () => {
    const { log, sink } = recordingSink();
    const stream = new MessageWritable(sink);
    const source = new ReadableStream<unknown>({
      start(controller) {
        for (let i = 0; i < 100; i++) controller.enqueue(i);
        controller.close();
      },
    });
    const piping = source.pipeTo(stream);
    assert.equal(stream.locked, true);
    assert.throws(() => stream.getWriter(), TypeError);
    await piping;
    assert.deepEqual(log, [...Array.from({ length: 100 }, (_, i) => i), "close"]);
  });
});

/** A pair of in-memory byte pipes, each end an SDK `ndJsonStream`, as over stdio. */
function sdkStreamPair() {
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  return {
    client: acp.ndJsonStream(up.writable, down.readable),
    agent: acp.ndJsonStream(down.writable, up.readable),
    /** The agent's output, to end or fail it from outside. */
    agentOutput: down.writable,
  };
}

function wrappedPair() {
  const pipes = sdkStreamPair();
  let handled = 0;
  const agent = withCancellation(acp.agent({ name: "agent" }));
  agent.onRequest("*", async ({ method, params, signal }) => {
    handled++;
    if (method === "test/echo") return { echoed: (params as { n: number }).n };
    if (method === "test/wait") {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      signal.throwIfAborted();
    }
    throw acp.RequestError.methodNotFound(method);
  });
  const agentConnection = agent.connect(pipes.agent);
  const client = withCancellation(acp.client({ name: "client" }));
  const clientConnection = client.connect(pipes.client);
  return { pipes, agent, client, agentConnection, clientConnection, handled: () => handled };
}

describe("withCancellation around the SDK's own ndJsonStream, real SDK apps on both ends", () => {
  it("answers many concurrent requests, each once, with its own result, and leaves no job behind", async () => {
    const { client, agent, clientConnection, handled } = wrappedPair();
    const count = 500;
    const results = await Promise.all(
      Array.from({ length: count }, (_, n) => clientConnection.agent.request("test/echo", { n })),
    );
    assert.deepEqual(
      results,
      Array.from({ length: count }, (_, n) => ({ echoed: n })),
    );
    assert.equal(handled(), count);
    assert.deepEqual(client.cancellations[0]?.engine.inFlight, { client: 0, agent: 0 });
    assert.deepEqual(agent.cancellations[0]?.engine.inFlight, { client: 0, agent: 0 });
  });

  it("a cancel from the client's app reaches the agent's handler through both wrapped streams", async () => {
    const { client, clientConnection, handled } = wrappedPair();
    const stop = new AbortController();
    const waiting = clientConnection.agent.request("test/wait", {}, { cancellationSignal: stop.signal });
    while (handled() === 0) await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    await assert.rejects(waiting, (error: { code?: number }) => error.code === -32800);
    assert.deepEqual(client.cancellations[0]?.engine.inFlight, { client: 0, agent: 0 });
  });

  it("the peer's end closes the app's connection and answers what it still owed", async () => {
    const { pipes, clientConnection, handled } = wrappedPair();
    const waiting = clientConnection.agent.request("test/wait", {});
    while (handled() === 0) await new Promise((resolve) => setImmediate(resolve));
    await pipes.agentOutput.close();
    await assert.rejects(waiting);
    await clientConnection.closed;
  });

  it("a wire that fails under the app's writes answers the app's requests instead of leaving them hanging", async () => {
    let writes = 0;
    const failing = new WritableStream<Uint8Array>({
      write() {
        writes++;
        throw new Error("pipe broke");
      },
    });
    const silent = new ReadableStream<Uint8Array>({ start() {} });
    const client = withCancellation(acp.client({ name: "client" }));
    const connection = client.connect(acp.ndJsonStream(failing, silent));
    await assert.rejects(connection.agent.request("test/echo", { n: 1 }));
    assert.equal(writes, 1);
    assert.deepEqual(client.cancellations[0]?.engine.inFlight, { client: 0, agent: 0 });
  });
});
