import assert from "node:assert/strict";
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import type { JsonRpcMessage } from "../../src/wire/index.js";

describe("engine: a response without an id is never answered", () => {
  it("an id-less error (a peer answering a notification, as codex-acp 0.16.0 does) is reported, not answered", () => {
    const delivered: { to: Side; message: JsonRpcMessage }[] = [];
    const problems: string[] = [];
    const engine = new CancelEngine((to, message) => delivered.push({ to, message }), {
      onEvent: (event) => {
        if (event.type === "problem") problems.push(event.detail);
      },
    });
    for (const stray of [
      { jsonrpc: "2.0", error: { code: -32601, message: "Method not found", data: "$/cancel_request" } },
      { jsonrpc: "2.0", result: {} },
    ]) {
      engine.receive("agent", stray);
    }
    assert.equal(delivered.length, 0, "nothing sent to either side");
    assert.equal(problems.length, 2, "each reported as a problem");
    // A message with neither method, id, result nor error is still a request-shaped mistake.
    engine.receive("agent", { jsonrpc: "2.0" });
    assert.equal(delivered.length, 1);
    assert.equal((delivered[0]?.message as { error?: { code: number } }).error?.code, -32600);
  });
});
