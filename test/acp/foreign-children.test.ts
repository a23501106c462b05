import assert from "node:assert/strict";
import sinon from "sinon";
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import { type AnyJob, Job } from "../../src/core/index.js";
import { settle } from "../support/jobs.js";
import type { JsonRpcMessage } from "../../src/wire/index.js";

interface Delivery {
  to: Side;
  message: JsonRpcMessage;
}

/**
 * The engine of an embedded agent (the agent side in process) with a turn in flight, plus
 * jobs of another binding started under the turn, as a handler does with `jobOf(ctx)`.
 */
function turnWithForeignChildren(graceMs: number, foreign: number, clientHonoursCancel = false) {
  const log: Delivery[] = [];
  const engine = new CancelEngine((to, message) => log.push({ to, message }), {
    graceMs,
    agent: { inProcess: true },
    client: { cancelSupport: clientHonoursCancel ? "yes" : "auto" },
  });
  engine.receive("client", {
    jsonrpc: "2.0",
    id: 1,
    method: "session/prompt",
    params: { sessionId: "s", prompt: [{ type: "text", text: "go" }] },
  });
  const turn = engine.job("client", 1);
  assert.ok(turn);
  const children = Array.from({ length: foreign }, (_, i) => new Job({ binding: "other", i }, turn));
  const cancelRequests = () =>
    log.filter((d) => "method" in d.message && d.message.method === "$/cancel_request").length;
  const answers = () => log.filter((d) => d.to === "client" && "id" in d.message && d.message.id === 1);
  return { engine, log, turn, children, cancelRequests, answers };
}

const cancelled = { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } };

describe("CancelEngine: a held answer waits for children of other bindings", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
  });
  afterEach(() => clock.restore());

  it("session/cancel reaches the foreign children; the turn's answer leaves when the last of them settles", () => {
    const t = turnWithForeignChildren(1000, 2);
    t.engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    assert.ok(t.children.every((child) => child.state === "cancelling" && child.signal.aborted));
    assert.equal(t.cancelRequests(), 1, "the in-process agent is told by $/cancel_request");
    // The agent's handler returns at once; the answer is held for the children.
    t.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
    assert.deepEqual(t.answers(), []);
    settle(t.children[0] as AnyJob);
    assert.deepEqual(t.answers(), [], "one child is still out");
    clock.tick(10);
    settle(t.children[1] as AnyJob);
    assert.deepEqual(
      t.answers().map((d) => d.message),
      [cancelled],
    );
    clock.tick(5000);
    assert.equal(t.answers().length, 1, "answered exactly once");
    assert.deepEqual(t.engine.inFlight, { client: 0, agent: 0 });
    assert.equal(clock.countTimers(), 0);
  });

  it("children that settled before the handler answered hold nothing", () => {
    const t = turnWithForeignChildren(1000, 1);
    t.engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    settle(t.children[0] as AnyJob);
    t.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
    assert.deepEqual(
      t.answers().map((d) => d.message),
      [cancelled],
    );
    assert.equal(clock.countTimers(), 0);
  });

  it("a foreign child that never settles holds the answer for the engine's grace and no longer", () => {
    const t = turnWithForeignChildren(300, 1);
    t.engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    t.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
    clock.tick(299);
    assert.deepEqual(t.answers(), []);
    clock.tick(1);
    assert.deepEqual(
      t.answers().map((d) => d.message),
      [cancelled],
    );
    settle(t.children[0] as AnyJob); // settling late answers nothing twice
    assert.equal(t.answers().length, 1);
    assert.deepEqual(t.engine.inFlight, { client: 0, agent: 0 });
  });

  it("own and foreign children mixed: the nested request's answer leaves before the turn's", () => {
    const t = turnWithForeignChildren(1000, 1, true);
    // The agent's handler sends a nested request under the turn (attributed by session).
    t.engine.receive("agent", {
      jsonrpc: "2.0",
      id: 7,
      method: "fs/read_text_file",
      params: { sessionId: "s", path: "/a" },
    });
    t.engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    t.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
    settle(t.children[0] as AnyJob);
    assert.deepEqual(t.answers(), [], "the nested request is still out");
    t.engine.receive("client", {
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32800, message: "Request cancelled" },
    });
    const order = t.log
      .filter((d) => "id" in d.message && !("method" in d.message))
      .map((d) => `${d.to}:${String((d.message as { id: unknown }).id)}`);
    assert.deepEqual(order.slice(-2), ["agent:7", "client:1"]);
    assert.deepEqual(t.engine.inFlight, { client: 0, agent: 0 });
  });

  it("a turn that is not cancelled answers normally, whatever its foreign children do", () => {
    const t = turnWithForeignChildren(1000, 1);
    t.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
    assert.deepEqual(
      t.answers().map((d) => d.message),
      [{ jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }],
    );
    settle(t.children[0] as AnyJob);
    assert.equal(t.answers().length, 1);
  });
});
