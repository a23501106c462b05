import assert from "node:assert/strict";
import { InitializeReplay } from "../../src/bridge/initialize-replay.js";

describe("--on-stuck restart: the replayed initialize", () => {
  it("swallows only the restarted agent's answer to it, and never throws on a line that is not an object", () => {
    const replay = new InitializeReplay();
    replay.toAgent({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const sent = replay.next();
    assert.equal(sent?.id, "acp-cancel/restart-1");
    for (const line of [null, 5, "text", [], { jsonrpc: "2.0", id: sent.id, method: "x" }, { jsonrpc: "2.0", id: 1, result: {} }]) {
      assert.equal(replay.swallows(line), false, JSON.stringify(line));
    }
    assert.equal(replay.swallows({ jsonrpc: "2.0", id: sent.id, result: {} }), true);
    assert.equal(replay.swallows({ jsonrpc: "2.0", id: sent.id, result: {} }), false, "once");
  });
});
