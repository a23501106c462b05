import assert from "node:assert/strict";
import { type BridgeProcess, closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { collectLines } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

type Line = Record<string, unknown>;

/** A raw-wire editor: writes JSON lines to the bridge, reads the lines it answers. */
function rawEditor(bridge: BridgeProcess) {
  const received: Line[] = collectLines(bridge.child.stdout);
  return {
    received,
    send: (message: Line) => bridge.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`),
    answerTo: (id: unknown, what: string) =>
      eventually(() => received.find((m) => m.id === id && !("method" in m)), what),
  };
}

const errorOf = (m: Line) => m.error as { code: number; data?: { reason?: string } };

describe("bridge, raw-wire peers for what the v2 SDK cannot produce on demand", () => {
  it("v2 tool_call/cancel and terminal/cancel are ordinary requests: a deadline, and $/cancel_request, each answered -32800 with its reason", async () => {
    const bridge = spawnBridge(["--timeout", "tool_call/cancel=0.1"], "v2-agent", ["--bare"]);
    const editor = rawEditor(bridge);
    try {
      editor.send({ id: 0, method: "initialize", params: { protocolVersion: 2, info: { name: "raw", version: "1" } } });
      await editor.answerTo(0, "initialize");
      editor.send({ id: 1, method: "session/new", params: { cwd: "/" } });
      await editor.answerTo(1, "session/new");
      editor.send({ id: 2, method: "tool_call/cancel", params: { sessionId: "session-1", toolCallId: "t1" } });
      assert.equal(errorOf(await editor.answerTo(2, "tool_call/cancel past its deadline")).data?.reason, "deadline");
      editor.send({ id: 3, method: "terminal/cancel", params: { sessionId: "session-1", terminalId: "x" } });
      editor.send({ method: "$/cancel_request", params: { requestId: 3 } });
      const answer = errorOf(await editor.answerTo(3, "terminal/cancel"));
      assert.equal(answer.code, -32800);
      assert.equal(answer.data?.reason, "external");
      assert.ok(bridge.hop("bridge->agent").some((m) => m.method === "$/cancel_request"));
      assert.equal(editor.received.filter((m) => m.id === 2 || m.id === 3).length, 2, "each answered once");
    } finally {
      await closeBridge(bridge);
    }
  });

  it("an agent answering protocol version 3: everything passes untouched, only $/cancel_request is tracked, and the bridge warns", async () => {
    const bridge = spawnBridge(["--log-level", "warn"], "raw-v3-agent");
    const editor = rawEditor(bridge);
    try {
      const init = { id: 0, method: "initialize", params: { protocolVersion: 3, info: { name: "raw", version: "1" } } };
      editor.send(init);
      const answer = await editor.answerTo(0, "initialize");
      assert.deepEqual(answer, { jsonrpc: "2.0", id: 0, result: { protocolVersion: 3, info: { name: "v3", version: "3" } } });
      assert.deepEqual(bridge.hop("bridge->agent")[0], { jsonrpc: "2.0", ...init }, "no capability added");
      editor.send({ id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
      editor.send({ method: "session/cancel", params: { sessionId: "s" } });
      await eventually(() => editor.received.find((m) => m.method === "_v3/echo"), "the echo of session/cancel");
      assert.deepEqual(
        bridge.hop("bridge->agent").map((m) => m.method),
        ["initialize", "session/prompt", "session/cancel"],
        "no $/cancel_request invented for a v3 session/cancel",
      );
      editor.send({ method: "$/cancel_request", params: { requestId: 1 } });
      const cancelled = await editor.answerTo(1, "the prompt");
      assert.deepEqual(cancelled.result, { stopReason: "cancelled-in-v3" }, "the agent's own answer, untouched");
      await eventually(() => (bridge.stderr().includes("protocol version 3") ? true : undefined), "the warning");
      assert.ok(bridge.trace().some((e) => e.note?.includes('"rules":"pass-through"')));
    } finally {
      await closeBridge(bridge);
    }
  });
});
