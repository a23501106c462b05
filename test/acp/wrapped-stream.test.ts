import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { cancellableStream, withCancellation } from "../../src/index.js";

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

// The wrapped path: a stream acp-cancel did not make is put behind a pair of standard web streams
// in front of the engine (cancellableStream). Moved here from the tests of the hand-written
// streams it used to be (MessageReadable / MessageWritable, removed).
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

describe("cancellableStream: the standard streams it hands the app", () => {
  it("the app stopping reading closes its side: the peer's pending request is answered naming why", async () => {
    const toApp = new TransformStream<unknown, unknown>();
    const fromApp = new TransformStream<unknown, unknown>();
    const { stream, cancellation } = cancellableStream(
      { readable: toApp.readable, writable: fromApp.writable },
      { role: "client" },
    );
    const peer = toApp.writable.getWriter();
    const wire = fromApp.readable.getReader();
    const appReader = stream.readable.getReader();
    void peer.write({ jsonrpc: "2.0", id: 7, method: "fs/read_text_file", params: { sessionId: "s", path: "a" } });
    assert.deepEqual((await appReader.read()).value, {
      jsonrpc: "2.0",
      id: 7,
      method: "fs/read_text_file",
      params: { sessionId: "s", path: "a" },
    });
    await appReader.cancel("done");
    const answer = (await wire.read()).value as { id: unknown; error?: { code: number; message: string } };
    assert.equal(answer.id, 7);
    assert.equal(answer.error?.code, -32800);
    assert.match(answer.error?.message ?? "", /the local app stopped reading/);
    assert.deepEqual(cancellation.engine.inFlight, { client: 0, agent: 0 });
  });

  it("the app's writes reach the peer in order, and its close closes the peer's stream", async () => {
    const toApp = new TransformStream<unknown, unknown>();
    const fromApp = new TransformStream<unknown, unknown>();
    const { stream } = cancellableStream({ readable: toApp.readable, writable: fromApp.writable }, { role: "client" });
    const writer = stream.writable.getWriter();
    const notes = Array.from({ length: 50 }, (_, n) => ({ jsonrpc: "2.0", method: "_test/note", params: { n } }));
    for (const note of notes) void writer.write(note);
    void writer.close();
    const seen: unknown[] = [];
    const wire = fromApp.readable.getReader();
    for (let read = await wire.read(); !read.done; read = await wire.read()) seen.push(read.value);
    assert.deepEqual(seen, notes);
  });
});
