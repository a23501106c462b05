import assert from "node:assert/strict";
import sinon from "sinon";
import { CancelEngine, type EngineEvent, type EngineOptions } from "../../src/index.js";
import { CAPABILITY_KEY, OUR_CAPABILITY, type Side } from "../../src/acp/index.js";
import type { JsonRpcId, JsonRpcMessage } from "../../src/wire/index.js";
import { ConformanceTracker } from "../support/schema-validator.js";

/**
 * The engine at message level with a raw-wire v2 peer on each side: the cases the SDK's v2
 * apps cannot produce on demand (races, a peer that ignores cancels, an unknown version).
 * Everything the engine delivers is checked against the official v2 schema.
 */
class V2Wire {
  readonly delivered: { to: Side; message: Record<string, unknown> }[] = [];
  readonly events: EngineEvent[] = [];
  readonly engine: CancelEngine;
  private readonly conformance = new ConformanceTracker("engine (v2 raw wire)");
  private cursor = 0;

  constructor(options: EngineOptions = {}) {
    this.engine = new CancelEngine(
      (to, message) => {
        // What reaches the agent stands in for the client's words, and the other way round.
        this.conformance.see(to === "agent" ? "a" : "b", message);
        this.delivered.push({ to, message: message as Record<string, unknown> });
      },
      { ...options, onEvent: (event) => this.events.push(event) },
    );
  }

  client(message: JsonRpcMessage) {
    this.engine.receive("client", message);
    return this.take();
  }

  agent(message: JsonRpcMessage) {
    this.engine.receive("agent", message);
    return this.take();
  }

  take() {
    const fresh = this.delivered.slice(this.cursor);
    this.cursor = this.delivered.length;
    return fresh;
  }

  /** initialize in v2 (client id 0), the agent answering `version`. */
  handshake(version: number, agentAdvertises = false) {
    const sent = this.client(req(0, "initialize", { protocolVersion: 2, info: INFO, capabilities: {} }));
    const capabilities = agentAdvertises ? { _meta: { [CAPABILITY_KEY]: OUR_CAPABILITY } } : {};
    const answered = this.agent(ok(0, { protocolVersion: version, info: INFO, capabilities }));
    return { sent, answered };
  }
}

const INFO = { name: "raw", version: "1.0.0" };
const req = (id: JsonRpcId, method: string, params: object): JsonRpcMessage => ({ jsonrpc: "2.0", id, method, params });
const ok = (id: JsonRpcId, result: unknown): JsonRpcMessage => ({ jsonrpc: "2.0", id, result });
const note = (method: string, params: object): JsonRpcMessage => ({ jsonrpc: "2.0", method, params });
const prompt = (id: JsonRpcId) => req(id, "session/prompt", { sessionId: "s", prompt: [{ type: "text", text: "go" }] });
const permission = (id: JsonRpcId) =>
  req(id, "session/request_permission", {
    sessionId: "s",
    title: "Edit",
    options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
  });
const state = (value: "running" | "idle" | "requires_action") =>
  note("session/update", {
    sessionId: "s",
    update:
      value === "idle"
        ? { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" }
        : { sessionUpdate: "state_update", state: value },
  });
const cancelRequest = (requestId: JsonRpcId) => note("$/cancel_request", { requestId });
const sessionCancel = () => note("session/cancel", { sessionId: "s" });
const errorOf = (m: Record<string, unknown> | undefined) => m?.error as { code: number; data?: { reason?: string } } | undefined;

function withClock(body: (clock: sinon.SinonFakeTimers) => void): void {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance", "Date"] });
  try {
    body(clock);
  } finally {
    sandbox.restore();
  }
}

describe("CancelEngine under the ACP v2 draft (raw wire)", () => {
  it("initialize: our capability goes under capabilities._meta both ways; the v2 rules are announced", () => {
    const wire = new V2Wire();
    const { sent, answered } = wire.handshake(2);
    const params = sent[0]?.message.params as { capabilities: { _meta: Record<string, unknown> } };
    const result = answered[0]?.message.result as { capabilities: { _meta: Record<string, unknown> } };
    assert.deepEqual(params.capabilities._meta[CAPABILITY_KEY], OUR_CAPABILITY);
    assert.deepEqual(result.capabilities._meta[CAPABILITY_KEY], OUR_CAPABILITY);
    assert.ok(!("clientCapabilities" in (sent[0]?.message.params as object)));
    assert.ok(!("agentCapabilities" in (answered[0]?.message.result as object)));
    assert.deepEqual(
      wire.events.filter((e) => e.type === "protocol-version"),
      [{ type: "protocol-version", version: 2, rules: "v2" }],
    );
  });

  it("a prompt cancelled before insertion, agent ignoring it: -32800 with data.reason after grace, never stopReason", () =>
    withClock((clock) => {
      const wire = new V2Wire({ graceMs: 100 });
      wire.handshake(2);
      wire.client(prompt(1));
      // $/cancel_request withdraws the held prompt: forwarded as is, no session/cancel invented.
      const forwarded = wire.client(cancelRequest(1));
      assert.deepEqual(
        forwarded.map((d) => d.message.method),
        ["$/cancel_request"],
      );
      clock.tick(100);
      const [answer] = wire.take();
      assert.equal(answer?.to, "client");
      assert.equal(errorOf(answer?.message)?.code, -32800);
      assert.equal(errorOf(answer?.message)?.data?.reason, "external");
      assert.ok(!("result" in (answer?.message ?? {})));
      // The agent's late {messageId} is dropped: the prompt is answered once.
      assert.deepEqual(wire.agent(ok(1, { messageId: "m1" })), []);
      assert.deepEqual(wire.engine.inFlight, { client: 0, agent: 0 });
    }));

  it("a cancel crossing the insertion: the agent's {messageId} passes untouched", () => {
    const wire = new V2Wire();
    wire.handshake(2);
    wire.client(prompt(1));
    wire.client(cancelRequest(1));
    const inserted = ok(1, { messageId: "m1" });
    const [answer] = wire.agent(inserted);
    assert.equal(answer?.message, inserted, "the same message object, untouched");
  });

  it("foreground work from a running state_update to idle is the parent of the agent's requests; session/cancel cancels them and the held prompt", () =>
    withClock((clock) => {
      const wire = new V2Wire({ graceMs: 100 });
      wire.handshake(2);
      // Agent-initiated foreground work: no prompt.
      wire.agent(state("running"));
      wire.agent(permission(50));
      wire.client(prompt(2)); // held: the agent is busy
      const afterCancel = wire.client(sessionCancel());
      assert.deepEqual(
        afterCancel.map((d) => [d.to, d.message.method ?? d.message.result ?? d.message.id]),
        [
          ["agent", "session/cancel"],
          ["client", "$/cancel_request"],
          ["agent", { outcome: { outcome: "cancelled" } }],
          ["agent", "$/cancel_request"],
        ],
      );
      // A request the agent makes after the cancel belongs to the cancelled work: answered at birth.
      const born = wire.agent(permission(51));
      assert.deepEqual(born.map((d) => [d.to, d.message.result]), [["agent", { outcome: { outcome: "cancelled" } }]]);
      // The agent honours the held prompt's cancel with its own -32800: reason added, still -32800.
      const [held] = wire.agent({ jsonrpc: "2.0", id: 2, error: { code: -32800, message: "cancelled" } });
      assert.equal(errorOf(held?.message)?.code, -32800);
      assert.equal(errorOf(held?.message)?.data?.reason, "session");
      // The idle state_update reaches the client and ends the work: new requests are not parented.
      assert.equal(wire.agent(state("idle"))[0]?.to, "client");
      assert.deepEqual(
        wire.agent(permission(52)).map((d) => d.to),
        ["client"],
      );
      wire.client(ok(52, { outcome: { outcome: "selected", optionId: "allow" } }));
      clock.tick(1000);
      assert.deepEqual(wire.engine.inFlight, { client: 0, agent: 0 });
    }));

  it("a session/cancel after the work went idle is not forwarded, unless the idle update listed background work", () => {
    const wire = new V2Wire();
    wire.handshake(2);
    const idle = (background?: unknown[]) =>
      note("session/update", { sessionId: "s", update: { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn", background } });
    wire.client(prompt(1));
    wire.agent(state("running"));
    wire.agent(ok(1, { messageId: "m1" }));
    wire.agent(idle([]));
    assert.deepEqual(wire.client(sessionCancel()), [], "nothing runs: dropped");
    assert.deepEqual(wire.events.filter((e) => e.type === "idle-cancel-dropped"), [{ type: "idle-cancel-dropped", sessionId: "s" }]);
    wire.agent(state("running"));
    wire.agent(idle([{ type: "tool_call", toolCallId: "bg" }]));
    assert.deepEqual(wire.client(sessionCancel()).map((d) => d.message.method), ["session/cancel"], "background work runs: forwarded");
    wire.agent(state("running"));
    wire.agent(idle());
    assert.deepEqual(wire.client(sessionCancel()), [], "an idle update that lists none again: dropped");
    assert.deepEqual(wire.engine.inFlight, { client: 0, agent: 0 });
  });

  it("a permission request for background work the latest state_update lists is not part of the foreground work: session/cancel leaves it open", () => {
    const wire = new V2Wire();
    wire.handshake(2);
    wire.agent(
      note("session/update", {
        sessionId: "s",
        update: { sessionUpdate: "state_update", state: "running", background: [{ type: "tool_call", toolCallId: "bg" }] },
      }),
    );
    const forBackground = (id: JsonRpcId, toolCallId: string) =>
      req(id, "session/request_permission", {
        sessionId: "s",
        title: "Run",
        subject: { type: "tool_call", toolCall: { toolCallId } },
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
      });
    wire.agent(forBackground(60, "bg"));
    wire.agent(forBackground(61, "fg"));
    const afterCancel = wire.client(sessionCancel());
    assert.deepEqual(
      afterCancel.filter((d) => d.message.method === "$/cancel_request").map((d) => d.message.params),
      [{ requestId: 61 }],
      "only the foreground dialog is cancelled",
    );
    const allow = ok(60, { outcome: { outcome: "selected", optionId: "allow" } });
    assert.equal(wire.client(allow)[0]?.message, allow, "the background dialog is answered by the client, untouched");
    wire.client(ok(61, { outcome: { outcome: "cancelled" } }));
    assert.deepEqual(wire.engine.inFlight, { client: 0, agent: 0 });
  });

  it("session/close with an inserted turn and a held prompt: the held prompt -32800 (grace), the close passes", () =>
    withClock((clock) => {
      const wire = new V2Wire({ graceMs: 100 });
      wire.handshake(2);
      wire.client(prompt(1));
      wire.agent(ok(1, { messageId: "m1" }));
      wire.agent(state("running"));
      wire.client(prompt(2));
      const closing = wire.client(req(3, "session/close", { sessionId: "s" }));
      assert.deepEqual(
        closing.map((d) => d.message.method),
        ["$/cancel_request", "session/close"],
      );
      clock.tick(100);
      const [held] = wire.take();
      assert.equal(held?.message.id, 2);
      assert.equal(errorOf(held?.message)?.data?.reason, "session");
      wire.agent(state("idle"));
      const [closed] = wire.agent(ok(3, {}));
      assert.deepEqual(closed?.message.result, {});
      assert.deepEqual(wire.engine.inFlight, { client: 0, agent: 0 });
    }));

  it("tool_call/cancel is an ordinary request: a deadline cancels it, the answer is -32800 reason deadline", () =>
    withClock((clock) => {
      const wire = new V2Wire({ graceMs: 100, deadlines: { "tool_call/cancel": 50 } });
      wire.handshake(2);
      wire.client(req(4, "tool_call/cancel", { sessionId: "s", toolCallId: "t1" }));
      clock.tick(49);
      assert.deepEqual(wire.take(), []);
      clock.tick(1);
      // At the deadline itself: the cancel to the agent, and the answer to the client.
      const [stop, answer] = wire.take();
      assert.equal(stop?.message.method, "$/cancel_request");
      assert.equal(errorOf(answer?.message)?.data?.reason, "deadline");
      wire.client(req(5, "terminal/cancel", { sessionId: "s", terminalId: "x" }));
      wire.client(cancelRequest(5));
      const [own] = wire.agent({ jsonrpc: "2.0", id: 5, error: { code: -32602, message: "unknown terminal" } });
      assert.equal(errorOf(own?.message)?.code, -32800);
      assert.equal(errorOf(own?.message)?.data?.reason, "external");
    }));

  it("an unknown protocol version: everything passes untouched, only $/cancel_request is tracked, and the engine says so", () =>
    withClock((clock) => {
      const wire = new V2Wire({ graceMs: 100 });
      const init = req(0, "initialize", { protocolVersion: 3, info: INFO, hello: "v3" });
      assert.equal(wire.client(init)[0]?.message, init);
      const answer = ok(0, { protocolVersion: 3, info: INFO, capabilities: {} });
      assert.equal(wire.agent(answer)[0]?.message, answer);
      assert.deepEqual(
        wire.events.filter((e) => e.type === "protocol-version"),
        [{ type: "protocol-version", version: 3, rules: "pass-through" }],
      );
      const p = prompt(1);
      assert.equal(wire.client(p)[0]?.message, p);
      const cancel = sessionCancel();
      assert.deepEqual(wire.client(cancel), [{ to: "agent", message: cancel }], "no cascade of our own");
      wire.client(cancelRequest(1));
      clock.tick(1000);
      assert.deepEqual(wire.take(), [], "never answered for the peer");
      const reply = ok(1, { stopReason: "whatever v3 says" });
      assert.equal(wire.agent(reply)[0]?.message, reply, "the peer's answer to a cancelled request passes untouched");
      assert.deepEqual(wire.engine.inFlight, { client: 0, agent: 0 });
    }));
});
