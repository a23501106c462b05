import assert from "node:assert/strict";
import sinon from "sinon";
import { CancelEngine, type EngineEvent } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import type { JsonRpcId, JsonRpcMessage } from "../../src/wire/index.js";
import { schemaProblem } from "../support/schema-validator.js";

interface Delivery {
  to: Side;
  message: JsonRpcMessage;
}

/** The real engine under the v2 draft (raw wire), `turnEnd` on, grace 100 ms, window 1000 ms, fake clock. */
function withV2Engine(body: (h: ReturnType<typeof harness>) => void): void {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
  try {
    const h = harness(clock);
    body(h);
    assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 }, "requests left in flight");
    assert.equal(clock.countTimers(), 0, "timers left behind");
    // Everything the engine delivered, whichever side wrote it, is valid v2 (responses checked by method).
    for (const { message } of h.log) {
      const m = message as Record<string, unknown>;
      const method = "method" in m ? undefined : h.methodOf(m.id as JsonRpcId);
      assert.equal(schemaProblem(2, m, method), undefined, JSON.stringify(m));
    }
  } finally {
    sandbox.restore();
  }
}

function harness(clock: sinon.SinonFakeTimers) {
  const log: Delivery[] = [];
  const events: EngineEvent[] = [];
  const methods = new Map<unknown, string>();
  const engine = new CancelEngine((to, message) => log.push({ to, message }), {
    now: () => Date.now(),
    graceMs: 100,
    turnEnd: { windowMs: 1000 },
    onEvent: (event) => events.push(event),
  });
  let cursor = 0;
  const take = () => {
    const fresh = log.slice(cursor);
    cursor = log.length;
    return fresh;
  };
  const receive = (side: Side, message: Record<string, unknown>) => {
    if (typeof message.method === "string" && "id" in message) methods.set(message.id, message.method);
    engine.receive(side, message);
    return take();
  };
  receive("client", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 2, info: INFO, capabilities: {} } });
  receive("agent", { jsonrpc: "2.0", id: 0, result: { protocolVersion: 2, info: INFO, capabilities: {} } });
  return {
    engine,
    log,
    methodOf: (id: JsonRpcId) => methods.get(id),
    client: (message: Record<string, unknown>) => receive("client", message),
    agent: (message: Record<string, unknown>) => receive("agent", message),
    tick: (ms: number) => (clock.tick(ms), take()),
    types: () => events.map((e) => e.type),
  };
}

const INFO = { name: "raw", version: "1.0.0" };
const prompt = (id: JsonRpcId) => ({
  jsonrpc: "2.0",
  id,
  method: "session/prompt",
  params: { sessionId: "s", prompt: [{ type: "text", text: "go" }] },
});
const inserted = (id: JsonRpcId) => ({ jsonrpc: "2.0", id, result: { messageId: `m-${String(id)}` } });
const state = (value: "running" | "idle", stopReason?: string) => ({
  jsonrpc: "2.0",
  method: "session/update",
  params: { sessionId: "s", update: { sessionUpdate: "state_update", state: value, ...(stopReason ? { stopReason } : {}) } },
});
const chunk = (text: string) => ({
  jsonrpc: "2.0",
  method: "session/update",
  params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", messageId: "r", content: { type: "text", text } } },
});
const sessionCancel = { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } };
const isIdle = (d: Delivery) =>
  JSON.stringify((d.message as { params?: unknown }).params ?? {}).includes('"state":"idle"');

describe("turn aftermath under the ACP v2 draft (raw wire, fake clock)", () => {
  it("an agent that reports idle within the grace: its own idle reaches the client, no aftermath, the next prompt goes on at once", () =>
    withV2Engine((h) => {
      h.client(prompt(1));
      h.agent(inserted(1));
      h.agent(state("running"));
      h.client(sessionCancel);
      h.tick(50);
      const idle = h.agent(state("idle", "cancelled"));
      assert.deepEqual(idle.map((d) => d.to), ["client"]);
      assert.deepEqual(h.tick(500), [], "nothing synthesised after the agent's own idle");
      assert.deepEqual(h.client(prompt(2)).map((d) => d.to), ["agent"], "not held");
      h.agent(inserted(2));
      h.agent(state("idle", "end_turn"));
      for (const type of ["turn-outlives-answer", "late-update-suppressed", "prompt-held", "emulated"] as const)
        assert.ok(!h.types().includes(type), `no ${type}`);
    }));

  it("an agent that ignores the cancel: the engine's idle after the grace, late updates dropped, the next prompt held until the agent's idle (which is not forwarded), then new work", () =>
    withV2Engine((h) => {
      h.client(prompt(1));
      h.agent(inserted(1));
      h.agent(state("running"));
      h.client(sessionCancel);
      const givenUp = h.tick(100);
      assert.equal(givenUp.length, 1);
      assert.ok(givenUp[0] && givenUp[0].to === "client" && isIdle(givenUp[0]));
      assert.deepEqual(h.agent(chunk("late")), [], "a late update is dropped");
      assert.deepEqual(h.client(prompt(2)), [], "the next prompt is held");
      const permission = h.agent({
        jsonrpc: "2.0",
        id: "perm",
        method: "session/request_permission",
        params: { sessionId: "s", title: "Edit", options: [{ optionId: "a", name: "Allow", kind: "allow_once" }] },
      });
      assert.deepEqual(permission.map((d) => [d.to, (d.message as { result?: unknown }).result]), [
        ["agent", { outcome: { outcome: "cancelled" } }],
      ]);
      const end = h.agent(state("idle", "cancelled"));
      assert.deepEqual(end.map((d) => [d.to, (d.message as { id?: unknown }).id]), [["agent", 2]], "only the held prompt moves");
      assert.ok(h.types().includes("turn-ended"));
      assert.equal(h.engine.aftermathStats.lateUpdatesSuppressed, 1);
      // The released prompt opened new work: a session/cancel now reaches it.
      assert.deepEqual(h.agent(inserted(2)).map((d) => d.to), ["client"]);
      h.agent(state("running"));
      h.client(sessionCancel);
      assert.deepEqual(h.agent(state("idle", "cancelled")).map((d) => d.to), ["client"]);
      assert.deepEqual(h.tick(1000), []);
    }));

  it("a held prompt cancelled by the client: -32800 at once (v2 has no cancelled prompt result), never sent", () =>
    withV2Engine((h) => {
      h.client(prompt(1));
      h.agent(inserted(1));
      h.client(sessionCancel);
      h.tick(100);
      h.client(prompt(2));
      const withdrawn = h.client({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 2 } });
      const answer = withdrawn.find((d) => d.to === "client")?.message as { error?: { code: number } } | undefined;
      assert.equal(answer?.error?.code, -32800);
      assert.ok(!withdrawn.some((d) => d.to === "agent" && (d.message as { id?: unknown }).id === 2));
      assert.deepEqual(h.agent(state("idle", "cancelled")), [], "nothing left to release");
    }));

  it("a prompt sent with session/cancel and answered -32800 (never inserted) starts no work: nothing made up, nothing held, the next prompt goes straight through", () =>
    withV2Engine((h) => {
      h.client(prompt(1));
      h.client(sessionCancel);
      const refused = h.agent({ jsonrpc: "2.0", id: 1, error: { code: -32800, message: "Request cancelled" } });
      assert.deepEqual(refused.map((d) => [d.to, (d.message as { error?: { code: number } }).error?.code]), [["client", -32800]]);
      assert.deepEqual(h.tick(1000), [], "no idle state_update made up for work that never ran");
      assert.deepEqual(h.client(prompt(2)).map((d) => [d.to, (d.message as { id?: unknown }).id]), [["agent", 2]], "not held");
      h.agent(inserted(2));
      h.agent(state("running"));
      assert.deepEqual(h.agent(state("idle", "end_turn")).map((d) => d.to), ["client"]);
      for (const type of ["turn-outlives-answer", "prompt-held", "emulated", "turn-stuck"] as const)
        assert.ok(!h.types().includes(type), `no ${type}`);
    }));

  it("session/close answered before the agent's idle: the client gets an idle (cancelled) first, then the close's answer; the agent's late idle is dropped", () =>
    withV2Engine((h) => {
      h.client(prompt(1));
      h.agent(inserted(1));
      h.agent(state("running"));
      const closing = h.client({ jsonrpc: "2.0", id: 2, method: "session/close", params: { sessionId: "s" } });
      assert.deepEqual(closing.map((d) => [d.to, (d.message as { method?: string }).method]), [["agent", "session/close"]]);
      const closed = h.agent({ jsonrpc: "2.0", id: 2, result: {} });
      assert.deepEqual(closed.map((d) => [d.to, isIdle(d), (d.message as { id?: unknown }).id]), [
        ["client", true, undefined],
        ["client", false, 2],
      ], "the idle before the close's answer");
      assert.deepEqual(h.agent(state("idle", "cancelled")), [], "the agent's own idle is not a second one");
      assert.deepEqual(h.tick(1000), []);
      assert.equal(h.types().filter((type) => type === "emulated").length, 1);
    }));

  it("session/close answered after the agent's idle (as the spec orders it): passed on as it came, nothing made up", () =>
    withV2Engine((h) => {
      h.client(prompt(1));
      h.agent(inserted(1));
      h.agent(state("running"));
      h.client({ jsonrpc: "2.0", id: 2, method: "session/close", params: { sessionId: "s" } });
      assert.deepEqual(h.agent(state("idle", "cancelled")).map((d) => [d.to, isIdle(d)]), [["client", true]]);
      assert.deepEqual(h.agent({ jsonrpc: "2.0", id: 2, result: {} }).map((d) => [d.to, isIdle(d)]), [["client", false]]);
      assert.deepEqual(h.tick(1000), []);
      assert.ok(!h.types().includes("emulated"));
    }));

  it("the window passes: the held prompt gets -32010 naming the prompt that opened the work", () =>
    withV2Engine((h) => {
      h.client(prompt("p1"));
      h.agent(inserted("p1"));
      h.client(sessionCancel);
      h.tick(100);
      h.client(prompt("p2"));
      const failed = h.tick(1000);
      const error = (failed[0]?.message as { error?: { code: number; data: { stuckPromptId: unknown } } }).error;
      assert.equal(error?.code, -32010);
      assert.equal(error?.data.stuckPromptId, "p1");
      h.agent(state("idle", "cancelled"));
    }));
});
