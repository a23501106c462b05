import assert from "node:assert/strict";
import { CancelEngine } from "../../src/index.js";
import { CLEANUP_METHODS, type Side } from "../../src/acp/index.js";
import type { JsonRpcMessage } from "../../src/wire/index.js";

type Message = Record<string, unknown>;

/** The real engine with a recording `deliver`; the tests answer everything, so no timer outlives them. */
function engineWith(cleanupMethods?: string[]) {
  const log: { to: Side; message: Message }[] = [];
  const engine = new CancelEngine((to, message: JsonRpcMessage) => log.push({ to, message: message as Message }), {
    graceMs: 60_000,
    ...(cleanupMethods === undefined ? {} : { cleanupMethods }),
  });
  const sentTo = (side: Side, method: string) =>
    log.filter((entry) => entry.to === side && entry.message.method === method).map((entry) => entry.message);
  const answersTo = (side: Side, id: number) =>
    log.filter((entry) => entry.to === side && entry.message.id === id && !("method" in entry.message));
  const request = (id: number, method: string, params: object) => ({ jsonrpc: "2.0", id, method, params });
  const ok = (id: number, result: object = {}) => ({ jsonrpc: "2.0", id, result });
  /** A session whose turn (client id 1) is cancelled by session/cancel and waits for an agent request (id 10). */
  const doomedTurn = () => {
    engine.receive("client", request(1, "session/prompt", { sessionId: "s", prompt: [] }));
    engine.receive("agent", request(10, "terminal/wait_for_exit", { sessionId: "s", terminalId: "t" }));
    engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
  };
  return { engine, log, sentTo, answersTo, request, ok, doomedTurn };
}

describe("cleanup methods: never cancelled on anyone's behalf", () => {
  it("the built-in table is terminal/kill, terminal/release and v2's terminal/cancel, tool_call/cancel", () => {
    assert.deepEqual([...CLEANUP_METHODS].sort(), [
      "terminal/cancel",
      "terminal/kill",
      "terminal/release",
      "tool_call/cancel",
    ]);
  });

  for (const method of ["terminal/kill", "terminal/release"]) {
    it(`${method} issued under a turn being cancelled goes to the client; the turn's answer waits for nothing`, () => {
      const h = engineWith();
      h.doomedTurn();
      h.engine.receive("client", h.ok(10)); // the client answers the cancelled wait
      h.engine.receive("agent", h.request(11, method, { sessionId: "s", terminalId: "t" }));
      assert.equal(h.sentTo("client", method).length, 1, `${method} reached the client`);
      assert.equal(h.answersTo("agent", 11).length, 0, "not answered at birth");
      assert.equal(h.engine.stats.cancelledAtBirth, 0);
      h.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
      assert.deepEqual(h.answersTo("client", 1).map((e) => e.message.result), [{ stopReason: "cancelled" }]);
      h.engine.receive("client", h.ok(11));
      assert.deepEqual(h.answersTo("agent", 11).map((e) => e.message), [h.ok(11)]);
      assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
    });
  }

  it("an ordinary request under the same doomed turn is still cancelled at birth", () => {
    const h = engineWith();
    h.doomedTurn();
    h.engine.receive("agent", h.request(12, "terminal/output", { sessionId: "s", terminalId: "t" }));
    assert.equal(h.sentTo("client", "terminal/output").length, 0);
    assert.equal((h.answersTo("agent", 12)[0]?.message.error as { code: number }).code, -32800);
    h.engine.receive("client", h.ok(10));
    h.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
    assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
  });

  it("session/cancel does not cancel a release already in flight (no $/cancel_request for it)", () => {
    const h = engineWith();
    h.engine.receive("client", h.request(1, "session/prompt", { sessionId: "s", prompt: [] }));
    h.engine.receive("agent", h.request(11, "terminal/release", { sessionId: "s", terminalId: "t" }));
    h.engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    const cancels = h.sentTo("client", "$/cancel_request").map((m) => (m.params as { requestId: unknown }).requestId);
    assert.deepEqual(cancels, []);
    assert.equal(h.answersTo("agent", 11).length, 0);
    h.engine.receive("client", h.ok(11));
    h.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
    assert.deepEqual(h.answersTo("agent", 11).map((e) => e.message), [h.ok(11)]);
    assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
  });

  it("its own issuer may still cancel it", () => {
    const h = engineWith();
    h.engine.receive("agent", h.request(11, "terminal/kill", { sessionId: "s", terminalId: "t" }));
    h.engine.receive("agent", { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 11 } });
    assert.equal(h.sentTo("client", "$/cancel_request").length, 1);
    h.engine.receive("client", { jsonrpc: "2.0", id: 11, error: { code: -32800, message: "Request cancelled" } });
    assert.equal((h.answersTo("agent", 11)[0]?.message.error as { code: number }).code, -32800);
    assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
  });

  it("an extension method joins the table through the cleanupMethods option", () => {
    for (const [extra, expected] of [
      [undefined, 0],
      [["_acme/stop_job"], 1],
    ] as const) {
      const h = engineWith(extra === undefined ? undefined : [...extra]);
      h.doomedTurn();
      h.engine.receive("agent", h.request(11, "_acme/stop_job", { sessionId: "s" }));
      assert.equal(h.sentTo("client", "_acme/stop_job").length, expected);
      h.engine.receive("client", h.ok(10));
      if (expected === 1) h.engine.receive("client", h.ok(11));
      h.engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
      assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
    }
  });

  it("a protocol method cannot be declared a cleanup method", () => {
    assert.throws(() => engineWith(["$/cancel_request"]), /cannot be a cleanup method/);
    assert.throws(() => engineWith([""]), /cannot be a cleanup method/);
  });
});
