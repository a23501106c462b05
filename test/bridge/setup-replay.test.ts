import assert from "node:assert/strict";
import { SetupReplay } from "../../src/bridge/setup-replay.js";
import type { JsonRpcRequest } from "../../src/wire/index.js";

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } } as const;
const authenticate = (id: number) => ({ jsonrpc: "2.0", id, method: "authenticate", params: { methodId: "api-key" } }) as const;

/** Replays into a list; `done` counts. */
function replayed(replay: SetupReplay) {
  const sent: JsonRpcRequest[] = [];
  let done = 0;
  replay.replay((request) => sent.push(request), () => done++);
  return { sent, done: () => done };
}

describe("--on-stuck restart: the replayed setup", () => {
  it("the initialize alone when the editor never signed in; only the new agent's answer to it is swallowed, once; never throws on a line that is not an object", () => {
    const replay = new SetupReplay();
    replay.toAgent(initialize);
    const run = replayed(replay);
    const [sent] = run.sent;
    assert.equal(sent?.id, "acp-cancel/restart-1");
    assert.deepEqual(sent.params, initialize.params);
    for (const line of [null, 5, "text", [], { jsonrpc: "2.0", id: sent.id, method: "x" }, { jsonrpc: "2.0", id: 1, result: {} }]) {
      assert.equal(replay.fromAgent(line), false, JSON.stringify(line));
    }
    assert.equal(run.done(), 0, "the editor's messages wait for the answer");
    assert.equal(replay.fromAgent({ jsonrpc: "2.0", id: sent.id, result: {} }), true);
    assert.equal(run.done(), 1);
    assert.equal(replay.fromAgent({ jsonrpc: "2.0", id: sent.id, result: {} }), false, "once");
    assert.equal(run.sent.length, 1);
  });

  it("the last sign-in the agent accepted follows the initialize's answer; a refused one is not replayed", () => {
    const replay = new SetupReplay();
    replay.toAgent(initialize);
    replay.toAgent(authenticate(2));
    assert.equal(replay.fromAgent({ jsonrpc: "2.0", id: 2, result: {} }), false, "the editor's own answer passes");
    replay.toAgent(authenticate(3));
    replay.fromAgent({ jsonrpc: "2.0", id: 3, error: { code: -32000, message: "bad key" } });
    const run = replayed(replay);
    assert.deepEqual(run.sent.map((r) => r.method), ["initialize"], "one at a time");
    replay.fromAgent({ jsonrpc: "2.0", id: run.sent[0]?.id, result: {} });
    assert.deepEqual(run.sent.map((r) => [r.method, r.id]), [["initialize", "acp-cancel/restart-1"], ["authenticate", "acp-cancel/restart-2"]]);
    assert.equal(run.done(), 0);
    // An error answer to a replayed sign-in is swallowed too: the editor's next request meets the agent's own refusal.
    assert.equal(replay.fromAgent({ jsonrpc: "2.0", id: "acp-cancel/restart-2", error: { code: -32000, message: "expired" } }), true);
    assert.equal(run.done(), 1);
  });

  it("the v2 draft's auth/login counts as the sign-in and auth/logout undoes it; with nothing to replay, done at once", () => {
    const empty = new SetupReplay();
    assert.equal(replayed(empty).done(), 1);
    const replay = new SetupReplay();
    replay.toAgent({ ...initialize, params: { protocolVersion: 2 } });
    replay.toAgent({ jsonrpc: "2.0", id: "l", method: "auth/login", params: { methodId: "key" } });
    replay.fromAgent({ jsonrpc: "2.0", id: "l", result: {} });
    const run = replayed(replay);
    replay.fromAgent({ jsonrpc: "2.0", id: run.sent[0]?.id, result: {} });
    assert.deepEqual(run.sent.map((r) => r.method), ["initialize", "auth/login"]);
    replay.fromAgent({ jsonrpc: "2.0", id: run.sent[1]?.id, result: {} });
    replay.toAgent({ jsonrpc: "2.0", id: "o", method: "auth/logout", params: {} });
    replay.fromAgent({ jsonrpc: "2.0", id: "o", result: {} });
    const afterLogout = replayed(replay);
    replay.fromAgent({ jsonrpc: "2.0", id: afterLogout.sent[0]?.id, result: {} });
    assert.deepEqual(afterLogout.sent.map((r) => r.method), ["initialize"], "signed out: nothing to sign in again");
    assert.equal(afterLogout.done(), 1);
  });
});
