import assert from "node:assert/strict";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { collectLines } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

/**
 * A peer's message nested deeper than JSON.stringify can recurse (valid JSON, read fine) must
 * not take the bridge down when the bridge has to write it anew rather than relay its bytes.
 */
describe("the bridge and a message nested too deeply to serialise", () => {
  it("an agent's deep answer to a cancelled prompt: the editor gets an error naming it, the bridge goes on", async () => {
    const bridge = spawnBridge([], "deep-answer-agent");
    const received = collectLines(bridge.child.stdout);
    const send = (message: object) => bridge.child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [] } });
    await eventually(() => received.find((m) => m.id === 2), "session/new answered");
    send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "deep-1", prompt: [{ type: "text", text: "hi" }] } });
    send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "deep-1" } });
    const answer = await eventually(() => received.find((m) => m.id === 3), "the prompt answered");
    const error = answer.error as { code: number; message: string } | undefined;
    assert.equal(error?.code, -32603, JSON.stringify(answer));
    assert.match(error.message, /nested too deeply to serialise/);
    // Still a bridge: the next request is relayed and answered.
    send({ jsonrpc: "2.0", id: 4, method: "session/new", params: { cwd: "/", mcpServers: [] } });
    await eventually(() => received.find((m) => m.id === 4 && "result" in m), "the next session/new answered");
    assert.equal(received.filter((m) => m.id === 3).length, 1, "the prompt answered exactly once");
    const exit = await closeBridge(bridge);
    assert.equal(exit.code, 0, bridge.stderr());
    assert.match(bridge.stderr(), /nested too deeply to serialise/);
  });

  it("an agent's -32800 with deep data to a cancelled request: the editor gets -32800, the bridge goes on", async () => {
    const bridge = spawnBridge([], "deep-answer-agent");
    const received = collectLines(bridge.child.stdout);
    const send = (message: object) => bridge.child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await eventually(() => received.find((m) => m.id === 1), "initialize answered");
    send({ jsonrpc: "2.0", id: 2, method: "_deep/error", params: {} });
    send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 2 } });
    const answer = await eventually(() => received.find((m) => m.id === 2), "the cancelled request answered");
    const error = answer.error as { code: number; data: { detail?: string } } | undefined;
    assert.equal(error?.code, -32800, JSON.stringify(answer));
    assert.match(String(error.data.detail), /nested too deeply to serialise/);
    send({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: "/", mcpServers: [] } });
    await eventually(() => received.find((m) => m.id === 3 && "result" in m), "the next session/new answered");
    assert.equal(received.filter((m) => m.id === 2).length, 1, "the request answered exactly once");
    const exit = await closeBridge(bridge);
    assert.equal(exit.code, 0, bridge.stderr());
  });

  it("an agent's protocol version nested too deeply: initialize answered, logged and traced without a throw", async () => {
    const bridge = spawnBridge([], "deep-answer-agent", ["deep-version"]);
    // Raw lines: the initialize answer is relayed as the agent wrote it, too deep for a schema check here.
    let output = "";
    bridge.child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    void bridge.input.pipeTo(new WritableStream()); // the harness's Web view of stdout must not hold it back
    const send = (message: object) => bridge.child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await eventually(() => (output.startsWith('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":[[[') ? true : undefined), "initialize answered");
    send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [] } });
    await eventually(() => (output.includes('\n{"jsonrpc":"2.0","id":2,"result":{"sessionId":"deep-1"}}\n') ? true : undefined), "session/new answered");
    const exit = await closeBridge(bridge);
    assert.equal(exit.code, 0, bridge.stderr());
    assert.match(bridge.stderr(), /protocol version \(a value nested too deeply to serialise\)/);
  });

  it("--otel: an editor's deep request, written anew with its trace context, is answered -32603; the bridge goes on", async () => {
    // No collector: the spans' export fails (a warning), which is not what this test looks at.
    const bridge = spawnBridge(["--otel"], "deep-answer-agent", [], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "200" },
    });
    const received = collectLines(bridge.child.stdout);
    const send = (line: string) => bridge.child.stdin.write(`${line}\n`);
    send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
    await eventually(() => received.find((m) => m.id === 1), "initialize answered");
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[],"_meta":{"deep":${deep}}}}`);
    const answer = await eventually(() => received.find((m) => m.id === 2), "the deep request answered");
    const error = answer.error as { code: number; message: string } | undefined;
    assert.equal(error?.code, -32603, JSON.stringify(answer));
    assert.match(error.message, /a message to the agent is nested too deeply to serialise/);
    send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: "/", mcpServers: [] } }));
    await eventually(() => received.find((m) => m.id === 3 && "result" in m), "the next session/new answered");
    assert.equal(received.filter((m) => m.id === 2).length, 1, "answered exactly once");
    const exit = await closeBridge(bridge);
    assert.equal(exit.code, 0, bridge.stderr());
  });
});
