import assert from "node:assert/strict";
import fc from "fast-check";
import sinon from "sinon";
import { CancelEngine, type EngineEvent, type EngineOptions } from "../../src/index.js";
import { CAPABILITY_KEY, OUR_CAPABILITY, otherSide, type Side } from "../../src/acp/index.js";
import { CANCEL_REASONS } from "../../src/core/index.js";
import type { JsonRpcId, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from "../../src/wire/index.js";

// ---- harness ----------------------------------------------------------------------------

interface Delivery {
  to: Side;
  message: JsonRpcMessage;
}

/** The real engine with a recording `deliver`, an event log and a fake clock. */
class Harness {
  readonly log: Delivery[] = [];
  readonly events: EngineEvent[] = [];
  readonly engine: CancelEngine;
  private cursor = 0;

  constructor(
    readonly clock: sinon.SinonFakeTimers,
    options: EngineOptions,
  ) {
    this.engine = new CancelEngine((to, message) => this.log.push({ to, message }), {
      ...options,
      onEvent: (event) => this.events.push(event),
    });
  }

  /** What was delivered since the previous call. */
  take(): Delivery[] {
    const fresh = this.log.slice(this.cursor);
    this.cursor = this.log.length;
    return fresh;
  }

  /** Feeds a message written by the client; returns what that delivered. */
  client(message: unknown): Delivery[] {
    this.engine.receive("client", message);
    return this.take();
  }

  /** Feeds a message written by the agent; returns what that delivered. */
  agent(message: unknown): Delivery[] {
    this.engine.receive("agent", message);
    return this.take();
  }

  tick(ms: number): Delivery[] {
    this.clock.tick(ms);
    return this.take();
  }

  close(side: Side, detail: string): Delivery[] {
    this.engine.close(side, detail);
    return this.take();
  }

  eventsOf<T extends EngineEvent["type"]>(type: T): Extract<EngineEvent, { type: T }>[] {
    return this.events.filter((event): event is Extract<EngineEvent, { type: T }> => event.type === type);
  }
}

/**
 * A fake clock in a sandbox of its own (the default sandbox would keep one fake per property run
 * and warn past 10,000). Only what the engine uses is faked: faking nextTick/queueMicrotask too
 * would make countTimers count jobs queued by unrelated code, such as that warning.
 */
function fakeClock(): { clock: sinon.SinonFakeTimers; restore: () => void } {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
  });
  return { clock, restore: () => sandbox.restore() };
}

/** The pending fake timers, for assertion messages (reads the clock's internal table). */
function describeTimers(clock: sinon.SinonFakeTimers): string {
  const timers = (clock as unknown as { timers?: Map<unknown, { callAt: number; func: unknown }> }).timers;
  return [...(timers?.values() ?? [])]
    .map((timer) => `at ${timer.callAt}: ${String(timer.func).replace(/\s+/g, " ").slice(0, 120)}`)
    .join("; ");
}

/** Both tables empty and no timer left behind. */
function assertQuiet(h: Harness): void {
  assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 }, "requests left in flight");
  assert.equal(h.clock.countTimers(), 0, `timers left behind: ${describeTimers(h.clock)}`);
}

/** Runs `body` against a fresh engine on a fresh fake clock, then checks quiescence. */
function withEngine(options: EngineOptions, body: (h: Harness) => void): void {
  const { clock, restore } = fakeClock();
  try {
    const h = new Harness(clock, options);
    body(h);
    assertQuiet(h);
  } finally {
    restore();
  }
}

// ---- message builders ---------------------------------------------------------------------

function req(id: JsonRpcId, method: string, params?: object): JsonRpcRequest {
  return params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
}

function ok(id: JsonRpcId, result: unknown): JsonRpcResponse {
  return { jsonrpc: "2.0", id, result };
}

function fail(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  return data === undefined
    ? { jsonrpc: "2.0", id, error: { code, message } }
    : { jsonrpc: "2.0", id, error: { code, message, data } };
}

function note(method: string, params?: unknown): JsonRpcMessage {
  return params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
}

const cancelReq = (requestId: JsonRpcId) => note("$/cancel_request", { requestId });
const sessionCancel = (sessionId: string) => note("session/cancel", { sessionId });
const to = (side: Side, message: JsonRpcMessage): Delivery => ({ to: side, message });
const cancelled = (id: JsonRpcId, reason: string, detail?: string) =>
  fail(id, -32800, "Request cancelled", detail === undefined ? { reason } : { reason, detail });

const CAP = { version: 1, cancelRequest: true, cascade: true, sessionCancel: true };
const PROMPT_CANCELLED = { stopReason: "cancelled" };
const PERMISSION_CANCELLED = { outcome: { outcome: "cancelled" } };
const ALLOW = { outcome: { outcome: "selected", optionId: "allow" } };

const prompt = (id: JsonRpcId, sessionId: string) =>
  req(id, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
const permission = (id: JsonRpcId, sessionId: string) =>
  req(id, "session/request_permission", {
    sessionId,
    toolCall: { toolCallId: "t1" },
    options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
  });
const readFile = (id: JsonRpcId, sessionId?: string) =>
  req(id, "fs/read_text_file", sessionId === undefined ? { path: "/a" } : { sessionId, path: "/a" });

/** `initialize` (client id 0) answered by the agent, each side advertising the capability or not. */
function handshake(h: Harness, sides: { client: boolean; agent: boolean }): void {
  const meta = { _meta: { [CAPABILITY_KEY]: CAP } };
  const init = req(0, "initialize", { protocolVersion: 1, clientCapabilities: sides.client ? meta : {} });
  assert.equal(h.client(init).length, 1);
  const answer = h.agent(ok(0, { protocolVersion: 1, agentCapabilities: sides.agent ? meta : {} }));
  assert.equal(answer.length, 1);
  assert.equal(h.engine.supportsCancel("client"), sides.client);
  assert.equal(h.engine.supportsCancel("agent"), sides.agent);
}

// ---- tests ----------------------------------------------------------------------------------

describe("CancelEngine (message level)", () => {
  describe("races", () => {
    it("a $/cancel_request after the response passed does nothing", () =>
      withEngine({ graceMs: 100 }, (h) => {
        assert.deepEqual(h.client(req(1, "x/work", { n: 1 })), [to("agent", req(1, "x/work", { n: 1 }))]);
        assert.deepEqual(h.agent(ok(1, { done: true })), [to("client", ok(1, { done: true }))]);
        assert.deepEqual(h.client(cancelReq(1)), []);
        assert.equal(h.engine.stats.cancels, 0);
        assert.equal(h.engine.stats.lateRepliesDropped, 0);
        assert.deepEqual(h.events, []);
      }));

    it("a duplicate $/cancel_request is forwarded exactly once", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/work"));
        assert.deepEqual(h.client(cancelReq(1)), [to("agent", cancelReq(1))]);
        assert.deepEqual(h.client(cancelReq(1)), []);
        assert.deepEqual(h.client(cancelReq(1)), []);
        assert.equal(h.engine.stats.cancels, 1);
        assert.equal(h.clock.countTimers(), 1, "one grace timer");
        // The handler's own -32800 without a reason gets the reason added, its words kept.
        assert.deepEqual(h.agent(fail(1, -32800, "stopped by handler")), [
          to("client", fail(1, -32800, "stopped by handler", { reason: "external" })),
        ]);
        assert.deepEqual(h.eventsOf("cancel"), [
          { type: "cancel", side: "client", id: 1, method: "x/work", reason: "external" },
        ]);
      }));

    it("a $/cancel_request never crosses direction", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.agent(readFile(7));
        h.client(req(3, "x/work"));
        // The client names the agent's id, the agent names the client's id: both unknown to the issuer.
        assert.deepEqual(h.client(cancelReq(7)), []);
        assert.deepEqual(h.agent(cancelReq(3)), []);
        assert.equal(h.engine.stats.cancels, 0);
        assert.equal(h.engine.job("agent", 7)?.isRunning, true);
        assert.equal(h.engine.job("client", 3)?.isRunning, true);
        assert.equal(h.clock.countTimers(), 0);
        assert.deepEqual(h.client(ok(7, { content: "a" })), [to("agent", ok(7, { content: "a" }))]);
        assert.deepEqual(h.agent(ok(3, {})), [to("client", ok(3, {}))]);
      }));

    it("same id on both sides: each side's cancel names only its own request", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(5, "x/work"));
        h.agent(readFile(5));
        assert.deepEqual(h.agent(cancelReq(5)), [to("client", cancelReq(5))]);
        assert.equal(h.engine.job("client", 5)?.isRunning, true);
        assert.equal(h.engine.job("agent", 5)?.isRunning, false);
        assert.deepEqual(h.client(ok(5, { content: "x" })), [to("agent", ok(5, { content: "x" }))]);
        assert.deepEqual(h.agent(ok(5, { fine: true })), [to("client", ok(5, { fine: true }))]);
      }));

    it("cancel crossing an error answer: -32800 with reason external and the original error", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/work"));
        assert.deepEqual(h.client(cancelReq(1)), [to("agent", cancelReq(1))]);
        assert.deepEqual(h.agent(fail(1, -32603, "internal boom", { stack: "..." })), [
          to(
            "client",
            fail(1, -32800, "Request cancelled", {
              reason: "external",
              originalError: { code: -32603, message: "internal boom", data: { stack: "..." } },
            }),
          ),
        ]);
        assert.equal(h.engine.stats.lateRepliesDropped, 0);
        assert.equal(h.engine.stats.answeredForPeer, 0);
      }));

    it("cancel crossing a result: the result passes through as a partial result", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/search"));
        h.client(cancelReq(1));
        const partial = ok(1, { hits: ["a"], complete: false });
        const out = h.agent(partial);
        assert.deepEqual(out, [to("client", partial)]);
        assert.equal(out[0]?.message, partial, "passed through untouched");
      }));

    it("cancel crossing a -32800 that already has a reason: kept as the handler wrote it", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/work"));
        h.client(cancelReq(1));
        const answer = fail(1, -32800, "gave up", { reason: "internal", detail: "own timeout" });
        assert.deepEqual(h.agent(answer), [to("client", answer)]);
      }));

    it("cancel crossing a prompt answer: stopReason becomes cancelled, other fields kept (a v1 agent without the capability gets session/cancel alone)", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(prompt(1, "s"));
        assert.deepEqual(h.client(cancelReq(1)), [to("agent", sessionCancel("s"))]);
        assert.deepEqual(h.eventsOf("emulated"), [
          { type: "emulated", side: "agent", what: "session/cancel for a cancelled prompt", id: 1 },
        ]);
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn", _meta: { tokens: 12 } })), [
          to("client", ok(1, { stopReason: "cancelled", _meta: { tokens: 12 } })),
        ]);
      }));

    it("cancel crossing a prompt error: the prompt still ends with stopReason cancelled", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: false, agent: true });
        h.client(prompt(1, "s"));
        // The agent ends turns itself on session/cancel, but an external cancel still names the request.
        assert.deepEqual(h.client(cancelReq(1)), [to("agent", cancelReq(1))]);
        assert.deepEqual(h.agent(fail(1, -32603, "model crashed")), [to("client", ok(1, PROMPT_CANCELLED))]);
      }));

    it("cancel crossing a permission allow: the agent gets the cancelled outcome, the allow is dropped", () =>
      withEngine({ graceMs: 100 }, (h) => {
        assert.deepEqual(h.agent(permission(0, "s")), [to("client", permission(0, "s"))]);
        assert.deepEqual(h.agent(cancelReq(0)), [
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
        ]);
        assert.deepEqual(h.client(ok(0, ALLOW)), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 1);
        assert.deepEqual(h.eventsOf("late-reply-dropped"), [
          { type: "late-reply-dropped", side: "client", id: 0 },
        ]);
      }));
  });

  describe("grace", () => {
    it("a cancelled request whose handler never answers is answered after graceMs; the late reply is dropped", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/slow"));
        assert.deepEqual(h.client(cancelReq(1)), [to("agent", cancelReq(1))]);
        assert.deepEqual(h.tick(99), []);
        assert.deepEqual(h.tick(1), [to("client", cancelled(1, "external"))]);
        assert.equal(h.engine.stats.answeredForPeer, 1);
        assert.deepEqual(h.eventsOf("answered-for-peer"), [
          { type: "answered-for-peer", side: "client", id: 1, method: "x/slow", reason: "external" },
        ]);
        assert.deepEqual(h.agent(ok(1, { late: true })), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 1);
        assert.deepEqual(h.eventsOf("late-reply-dropped"), [
          { type: "late-reply-dropped", side: "agent", id: 1 },
        ]);
        // A second reply to the same id is no longer a late reply but a stray one.
        assert.deepEqual(h.agent(ok(1, { again: true })), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 1);
        assert.deepEqual(h.eventsOf("problem"), [
          { type: "problem", side: "agent", detail: "response to unknown request id 1" },
        ]);
      }));

    it("records the cancel latency (cancel to answer) on the injected clock", () =>
      withEngine({ graceMs: 100, now: () => Date.now() }, (h) => {
        h.tick(10);
        h.client(req(1, "x/slow"));
        h.client(cancelReq(1));
        h.tick(100);
        assert.deepEqual(h.engine.cancelLatencies, [100]);
        h.agent(ok(1, {}));
      }));

    it("records the cancel latency also for a cancel at clock time 0", () =>
      withEngine({ graceMs: 100, now: () => Date.now() }, (h) => {
        h.client(req(1, "x/slow"));
        h.client(cancelReq(1)); // now() === 0 here
        h.tick(100);
        assert.deepEqual(h.engine.cancelLatencies, [100], "the latency of a cancel at time 0 is lost");
        h.agent(ok(1, {}));
      }));

    it("keeps the last 4096 cancel latencies", () =>
      withEngine({ graceMs: 100, now: () => Date.now() }, (h) => {
        for (let id = 1; id <= 5000; id++) {
          h.client(req(id, "x/slow"));
          h.client(cancelReq(id));
          h.tick(id > 4000 ? 2 : 1); // the cancelled answer the agent gives at once (no grace)
          h.agent(cancelled(id, "external"));
        }
        const kept = h.engine.cancelLatencies;
        assert.equal(kept.length, 4096);
        assert.equal(kept.filter((ms) => ms === 2).length, 1000, "the 1000 newest are all kept");
      }));
  });

  describe("deadlines", () => {
    const options = { graceMs: 100, deadlines: { "fs/read_text_file": 50 } };

    it("expiry sends $/cancel_request to the handler and -32800 reason deadline to the issuer at the deadline itself, not after the grace; the late reply is dropped", () =>
      withEngine(options, (h) => {
        assert.deepEqual(h.agent(readFile(0, "s")), [to("client", readFile(0, "s"))]);
        assert.equal(h.clock.countTimers(), 1);
        assert.deepEqual(h.tick(49), []);
        assert.deepEqual(h.tick(1), [to("client", cancelReq(0)), to("agent", cancelled(0, "deadline"))]);
        assert.deepEqual(h.eventsOf("cancel"), [
          { type: "cancel", side: "agent", id: 0, method: "fs/read_text_file", reason: "deadline" },
        ]);
        assert.equal(h.clock.countTimers(), 0, "no grace timer: the answer is out");
        assert.deepEqual(h.client(ok(0, { content: "late" })), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 1);
      }));

    it("a prompt past its deadline: answered cancelled at the deadline (answered once), its turn followed to the agent's late answer", () =>
      withEngine({ graceMs: 100, deadlines: { "session/prompt": 50 }, turnEnd: { windowMs: 1000 } }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(prompt(1, "s"));
        const expired = h.tick(50);
        assert.deepEqual(expired.filter((d) => d.to === "client"), [to("client", ok(1, { stopReason: "cancelled" }))]);
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn" })), [], "the agent's late answer is dropped");
        assert.deepEqual(h.tick(1000), []);
      }));

    it("a request answered before its deadline clears its timer", () =>
      withEngine(options, (h) => {
        h.agent(readFile(1));
        h.agent(req(2, "terminal/create", { command: "ls" }));
        assert.equal(h.clock.countTimers(), 1, "only the method with a deadline has a timer");
        h.tick(30);
        assert.deepEqual(h.client(ok(1, { content: "ok" })), [to("agent", ok(1, { content: "ok" }))]);
        assert.equal(h.clock.countTimers(), 0);
        assert.deepEqual(h.tick(1000), []);
        assert.equal(h.engine.stats.cancels, 0);
        h.client(ok(2, { terminalId: "t" }));
      }));

    it("a request cancelled before its deadline clears the deadline timer", () =>
      withEngine(options, (h) => {
        h.agent(readFile(1));
        assert.deepEqual(h.agent(cancelReq(1)), [to("client", cancelReq(1))]);
        assert.equal(h.clock.countTimers(), 1, "the grace timer only");
        assert.deepEqual(h.tick(100), [to("agent", cancelled(1, "external"))]);
        assert.equal(h.engine.stats.cancels, 1);
      }));
  });

  describe("session/cancel cascade", () => {
    /** initialize; a prompt turn per session; nested agent requests under each. */
    function openTurns(h: Harness, sides: { client: boolean; agent: boolean }): void {
      handshake(h, sides);
      assert.deepEqual(h.client(prompt(1, "s")), [to("agent", prompt(1, "s"))]);
      assert.deepEqual(h.client(prompt(2, "t")), [to("agent", prompt(2, "t"))]);
      assert.deepEqual(h.agent(permission(0, "s")), [to("client", permission(0, "s"))]);
      assert.deepEqual(h.agent(readFile(1, "s")), [to("client", readFile(1, "s"))]);
      assert.deepEqual(h.agent(readFile(2, "t")), [to("client", readFile(2, "t"))]);
      assert.equal(h.engine.job("agent", 0)?.parent, h.engine.job("client", 1));
      assert.equal(h.engine.job("agent", 1)?.parent, h.engine.job("client", 1));
      assert.equal(h.engine.job("agent", 2)?.parent, h.engine.job("client", 2));
    }

    /** The other session is untouched, and ends normally. */
    function finishSessionT(h: Harness): void {
      assert.equal(h.engine.job("client", 2)?.isRunning, true);
      assert.equal(h.engine.job("agent", 2)?.isRunning, true);
      assert.deepEqual(h.client(ok(2, { content: "t" })), [to("agent", ok(2, { content: "t" }))]);
      assert.deepEqual(h.agent(ok(2, { stopReason: "end_turn" })), [
        to("client", ok(2, { stopReason: "end_turn" })),
      ]);
      assert.ok(
        !h.log.some(
          (d) =>
            "method" in d.message &&
            d.message.method === "$/cancel_request" &&
            (d.message.params as { requestId: unknown }).requestId === 2,
        ),
        "nothing of session t was cancelled",
      );
    }

    it("without the client capability: nested requests answered at once, the prompt answer normalised", () =>
      withEngine({ graceMs: 100 }, (h) => {
        openTurns(h, { client: false, agent: false });
        assert.deepEqual(h.client(sessionCancel("s")), [
          to("agent", sessionCancel("s")),
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
          to("client", cancelReq(1)),
          to("agent", cancelled(1, "session")),
          // A v1 agent ends its turn on the session/cancel it was sent: no second cancel of the
          // prompt by id (codex-acp 2.6 then let the next prompt join the cancelled turn).
        ]);
        assert.deepEqual(
          h.eventsOf("cancel").map((e) => [e.side, e.id, e.reason]),
          [
            ["agent", 0, "session"],
            ["agent", 1, "session"],
            ["client", 1, "session"],
          ],
        );
        assert.equal(h.clock.countTimers(), 1, "the turn's grace timer");
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn", _meta: { x: 1 } })), [
          to("client", ok(1, { stopReason: "cancelled", _meta: { x: 1 } })),
        ]);
        // The client's own answers come too late.
        assert.deepEqual(h.client(ok(0, ALLOW)), []);
        assert.deepEqual(h.client(ok(1, { content: "late" })), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 2);
        finishSessionT(h);
      }));

    it("with the client capability: the prompt answer is held until the nested read is answered by the client", () =>
      withEngine({ graceMs: 100 }, (h) => {
        openTurns(h, { client: true, agent: true });
        assert.deepEqual(h.client(sessionCancel("s")), [
          to("agent", sessionCancel("s")),
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
          to("client", cancelReq(1)),
          // The agent advertised sessionCancel: no $/cancel_request for the turn.
        ]);
        assert.equal(h.clock.countTimers(), 1, "one shared grace timer for the read and the turn");
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn" })), [], "held while the read is pending");
        assert.deepEqual(h.client(ok(1, { content: "partial" })), [
          to("agent", ok(1, { content: "partial" })),
          to("client", ok(1, PROMPT_CANCELLED)),
        ]);
        assert.deepEqual(h.client(ok(0, ALLOW)), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 1);
        finishSessionT(h);
      }));

    it("with the client capability: a read the client never answers is answered after grace, then the held prompt", () =>
      withEngine({ graceMs: 100 }, (h) => {
        openTurns(h, { client: true, agent: false });
        assert.deepEqual(h.client(sessionCancel("s")), [
          to("agent", sessionCancel("s")),
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
          to("client", cancelReq(1)),
        ]);
        h.tick(10);
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn", usage: { tokens: 3 } })), []);
        assert.deepEqual(h.tick(89), []);
        assert.deepEqual(h.tick(1), [
          to("agent", cancelled(1, "session")),
          to("client", ok(1, { stopReason: "cancelled", usage: { tokens: 3 } })),
        ]);
        assert.deepEqual(h.client(ok(1, { content: "late" })), []);
        finishSessionT(h);
      }));

    it("with the client capability: neither side answers, grace answers the read then the prompt", () =>
      withEngine({ graceMs: 100 }, (h) => {
        openTurns(h, { client: true, agent: true });
        h.client(sessionCancel("s"));
        assert.deepEqual(h.tick(100), [
          to("agent", cancelled(1, "session")),
          to("client", ok(1, PROMPT_CANCELLED)),
        ]);
        assert.equal(h.engine.stats.answeredForPeer, 3, "permission, read and prompt");
        finishSessionT(h);
      }));

    it("session/cancel for a session without a turn cancels its dangling agent requests", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.agent(permission(0, "s"));
        h.agent(readFile(1, "s"));
        h.agent(readFile(2, "t"));
        assert.deepEqual(h.client(sessionCancel("s")), [
          to("agent", sessionCancel("s")),
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
          to("client", cancelReq(1)),
        ]);
        assert.deepEqual(h.tick(100), [to("agent", cancelled(1, "session"))]);
        h.client(ok(2, {}));
      }));

    it("a late session/cancel (its turn answered, nothing of the session in flight) is not forwarded; the next prompt goes through", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: true, agent: true });
        h.client(prompt(1, "s"));
        h.agent(ok(1, { stopReason: "end_turn" }));
        h.agent(readFile(2, "t"));
        assert.deepEqual(h.client(sessionCancel("s")), [], "nothing of s runs: dropped");
        assert.deepEqual(h.client(sessionCancel("s")), [], "a retried Stop too");
        assert.deepEqual(h.eventsOf("idle-cancel-dropped"), [
          { type: "idle-cancel-dropped", sessionId: "s" },
          { type: "idle-cancel-dropped", sessionId: "s" },
        ]);
        assert.deepEqual(h.client(sessionCancel("t")), [to("agent", sessionCancel("t")), to("client", cancelReq(2))], "t has a request out");
        assert.deepEqual(h.client(prompt(3, "s")), [to("agent", prompt(3, "s"))]);
        h.agent(ok(3, { stopReason: "end_turn" }));
        h.tick(100);
        h.client(ok(2, {}));
      }));

    it("a session/cancel while the agent has not ended a turn the engine answered for it is forwarded (turnEnd)", () =>
      withEngine({ graceMs: 100, turnEnd: { windowMs: 1000 } }, (h) => {
        handshake(h, { client: true, agent: true });
        h.client(prompt(1, "s"));
        h.client(cancelReq(1));
        h.tick(100); // the agent ignored the cancel: the engine answered the prompt for it
        assert.deepEqual(h.client(sessionCancel("s")), [to("agent", sessionCancel("s"))]);
        assert.deepEqual(h.eventsOf("idle-cancel-dropped"), []);
        h.agent(ok(1, { stopReason: "cancelled" }));
        assert.deepEqual(h.client(sessionCancel("s")), [], "the agent has ended it: the next one is dropped");
      }));
  });

  describe("session/close", () => {
    const close = (id: JsonRpcId, sessionId: string) => req(id, "session/close", { sessionId });

    it("an agent answering the close before the turn it cancelled: the turn is answered cancelled first, the agent's late answer dropped", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(prompt(1, "s"));
        h.agent(permission(0, "s"));
        h.take();
        assert.deepEqual(h.client(close(2, "s")), [
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
          to("agent", close(2, "s")),
        ]);
        // opencode 1.18.33 answers session/close, then its turn, 20-30 ms apart.
        assert.deepEqual(h.agent(ok(2, {})), [to("client", ok(1, PROMPT_CANCELLED)), to("client", ok(2, {}))]);
        assert.deepEqual(h.eventsOf("answered-for-peer").map((e) => [e.side, e.id]), [["agent", 0], ["client", 1]]);
        assert.deepEqual(h.agent(ok(1, PROMPT_CANCELLED)), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 1);
      }));

    it("an error answer to the close leaves the turn to its grace: the session may still be open at the agent", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(prompt(1, "s"));
        h.client(close(2, "s"));
        assert.deepEqual(h.agent(fail(2, -32601, "Method not found")), [to("client", fail(2, -32601, "Method not found"))]);
        assert.deepEqual(h.agent(ok(1, PROMPT_CANCELLED)), [to("client", ok(1, PROMPT_CANCELLED))]);
      }));

    it("a close with no turn running, or after the turn's answer, passes at once", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(close(1, "s"));
        assert.deepEqual(h.agent(ok(1, {})), [to("client", ok(1, {}))]);
        h.client(prompt(2, "s"));
        h.client(close(3, "s"));
        assert.deepEqual(h.agent(ok(2, PROMPT_CANCELLED)), [to("client", ok(2, PROMPT_CANCELLED))]);
        assert.deepEqual(h.agent(ok(3, {})), [to("client", ok(3, {}))]);
        assert.deepEqual(h.eventsOf("answered-for-peer"), []);
      }));
  });

  describe("promptStopsTurn", () => {
    it("a prompt into a running turn is sent after the session/cancel the client left out; the old turn ends cancelled", () =>
      withEngine({ graceMs: 100, promptStopsTurn: true }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(prompt(1, "s"));
        h.client(prompt(5, "t"));
        h.agent(permission(0, "s"));
        h.take();
        assert.deepEqual(h.client(prompt(2, "s")), [
          to("agent", sessionCancel("s")),
          to("client", cancelReq(0)),
          to("agent", ok(0, PERMISSION_CANCELLED)),
          to("agent", prompt(2, "s")),
        ]);
        assert.deepEqual(h.eventsOf("emulated").map((e) => e.what), ["session/cancel before a prompt into a running turn"]);
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn" })), [to("client", ok(1, PROMPT_CANCELLED))]);
        // The new prompt is the session's turn now: a Stop reaches it; the other session's turn is untouched.
        assert.deepEqual(h.client(sessionCancel("s")), [to("agent", sessionCancel("s"))]);
        assert.deepEqual(h.agent(ok(2, PROMPT_CANCELLED)), [to("client", ok(2, PROMPT_CANCELLED))]);
        assert.deepEqual(h.agent(ok(5, { stopReason: "end_turn" })), [to("client", ok(5, { stopReason: "end_turn" }))]);
      }));

    it("a prompt after the turn's answer, or after a Stop already sent, adds nothing; off by default", () => {
      withEngine({ graceMs: 100, promptStopsTurn: true }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(prompt(1, "s"));
        h.agent(ok(1, { stopReason: "end_turn" }));
        assert.deepEqual(h.client(prompt(2, "s")), [to("agent", prompt(2, "s"))]);
        h.client(sessionCancel("s"));
        assert.deepEqual(h.client(prompt(3, "s")), [to("agent", prompt(3, "s"))]);
        h.agent(ok(2, PROMPT_CANCELLED));
        h.agent(ok(3, { stopReason: "end_turn" }));
        assert.deepEqual(h.eventsOf("emulated"), []);
      });
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: false, agent: false });
        h.client(prompt(1, "s"));
        // claude-agent-acp and codex-acp queue it on purpose.
        assert.deepEqual(h.client(prompt(2, "s")), [to("agent", prompt(2, "s"))]);
        h.agent(ok(1, { stopReason: "end_turn" }));
        h.agent(ok(2, { stopReason: "end_turn" }));
      });
    });
  });

  describe("cancelled at birth", () => {
    it("a request born under a cancelling turn is answered to the agent at once and never reaches the client", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: true, agent: true });
        h.client(prompt(1, "s"));
        h.client(sessionCancel("s"));
        assert.equal(h.engine.job("client", 1)?.isRunning, false);
        const detail = "issued under a request that was already being cancelled";
        assert.deepEqual(h.agent(readFile(5, "s")), [to("agent", cancelled(5, "session", detail))]);
        assert.deepEqual(h.agent(permission(6, "s")), [to("agent", ok(6, PERMISSION_CANCELLED))]);
        assert.equal(h.engine.stats.cancelledAtBirth, 2);
        assert.deepEqual(h.eventsOf("cancelled-at-birth"), [
          { type: "cancelled-at-birth", side: "agent", id: 5, method: "fs/read_text_file" },
          { type: "cancelled-at-birth", side: "agent", id: 6, method: "session/request_permission" },
        ]);
        // Other sessions and session-less requests are not affected.
        assert.deepEqual(h.agent(readFile(7, "t")), [to("client", readFile(7, "t"))]);
        assert.deepEqual(h.agent(readFile(8)), [to("client", readFile(8))]);
        assert.deepEqual(h.agent(ok(1, { stopReason: "end_turn" })), [to("client", ok(1, PROMPT_CANCELLED))]);
        // Once the turn has ended, the session's requests pass again.
        assert.deepEqual(h.agent(readFile(9, "s")), [to("client", readFile(9, "s"))]);
        for (const id of [7, 8, 9]) assert.deepEqual(h.client(ok(id, {})), [to("agent", ok(id, {}))]);
        assert.equal(h.engine.stats.lateRepliesDropped, 0);
      }));

    it("the same holds for a turn cancelled by $/cancel_request (reason external)", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(prompt(1, "s"));
        h.client(cancelReq(1));
        const detail = "issued under a request that was already being cancelled";
        assert.deepEqual(h.agent(readFile(0, "s")), [to("agent", cancelled(0, "external", detail))]);
        assert.deepEqual(h.tick(100), [to("client", ok(1, PROMPT_CANCELLED))]);
      }));
  });

  describe("negotiation", () => {
    it("adds our capability to initialize both ways, keeping other _meta keys and not mutating the input", () =>
      withEngine({}, (h) => {
        const params = {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: true }, _meta: { "vendor/x": { a: 1 } } },
        };
        const init = req(0, "initialize", params);
        const snapshot = structuredClone(init);
        assert.deepEqual(h.client(init), [
          to(
            "agent",
            req(0, "initialize", {
              protocolVersion: 1,
              clientCapabilities: {
                fs: { readTextFile: true },
                _meta: { "vendor/x": { a: 1 }, [CAPABILITY_KEY]: OUR_CAPABILITY },
              },
            }),
          ),
        ]);
        assert.deepEqual(init, snapshot, "input not mutated");
        assert.equal(h.engine.peerCapabilities.client, undefined);

        const result = {
          protocolVersion: 1,
          agentCapabilities: { loadSession: true, _meta: { [CAPABILITY_KEY]: CAP, "vendor/y": 2 } },
          authMethods: [],
        };
        const answer = ok(0, result);
        const answerSnapshot = structuredClone(answer);
        assert.deepEqual(h.agent(answer), [
          to(
            "client",
            ok(0, {
              protocolVersion: 1,
              agentCapabilities: {
                loadSession: true,
                _meta: { [CAPABILITY_KEY]: OUR_CAPABILITY, "vendor/y": 2 },
              },
              authMethods: [],
            }),
          ),
        ]);
        assert.deepEqual(answer, answerSnapshot, "input not mutated");
        assert.deepEqual(h.engine.peerCapabilities, { client: undefined, agent: CAP });
        assert.equal(h.engine.supportsCancel("agent"), true);
        assert.equal(h.engine.supportsCancel("client"), false);
      }));

    it("reads the client's capability and adds ours to an initialize without params", () => {
      withEngine({}, (h) => {
        h.client(
          req(0, "initialize", {
            protocolVersion: 1,
            clientCapabilities: { _meta: { [CAPABILITY_KEY]: CAP } },
          }),
        );
        assert.deepEqual(h.engine.peerCapabilities.client, CAP);
        assert.equal(h.engine.supportsCancel("client"), true);
        assert.deepEqual(h.agent(fail(0, -32602, "bad version")), [
          to("client", fail(0, -32602, "bad version")),
        ]);
        assert.equal(h.engine.peerCapabilities.agent, undefined);
      });
      withEngine({}, (h) => {
        assert.deepEqual(h.client(req(0, "initialize")), [
          to(
            "agent",
            req(0, "initialize", { clientCapabilities: { _meta: { [CAPABILITY_KEY]: OUR_CAPABILITY } } }),
          ),
        ]);
        assert.deepEqual(h.agent(ok(0, {})), [
          to("client", ok(0, { agentCapabilities: { _meta: { [CAPABILITY_KEY]: OUR_CAPABILITY } } })),
        ]);
        assert.deepEqual(h.engine.peerCapabilities, { client: undefined, agent: undefined });
      });
    });

    const malformed: [string, unknown][] = [
      ["version 2", { ...CAP, version: 2 }],
      ["a string flag", { ...CAP, cancelRequest: "yes" }],
      ["a missing flag", { version: 1, cancelRequest: true, cascade: true }],
      ["null", null],
      ["a string", "v1"],
    ];
    for (const [name, capability] of malformed) {
      it(`a malformed capability (${name}) counts as absent`, () =>
        withEngine({}, (h) => {
          h.client(req(0, "initialize", { clientCapabilities: { _meta: { [CAPABILITY_KEY]: capability } } }));
          h.agent(ok(0, { agentCapabilities: { _meta: { [CAPABILITY_KEY]: capability } } }));
          assert.deepEqual(h.engine.peerCapabilities, { client: undefined, agent: undefined });
          assert.equal(h.engine.supportsCancel("client"), false);
          assert.equal(h.engine.supportsCancel("agent"), false);
        }));
    }

    it("a _meta that is not an object counts as absent", () =>
      withEngine({}, (h) => {
        h.client(req(0, "initialize", { clientCapabilities: { _meta: "nope" } }));
        assert.equal(h.engine.peerCapabilities.client, undefined);
        h.agent(ok(0, { agentCapabilities: { _meta: { [CAPABILITY_KEY]: CAP } } }));
      }));
  });

  describe("close", () => {
    it("close(agent): what the agent owed is answered -32800 naming the detail; what it asked is cancelled toward the client", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/work"));
        h.client(prompt(2, "s"));
        h.client(req(3, "x/slow"));
        h.client(cancelReq(3)); // in grace when the agent goes
        h.agent(readFile(0, "s")); // nested under the turn
        h.agent(permission(1, "s"));
        h.agent(req(2, "terminal/create", { command: "ls" }));
        h.take();
        const before = h.log.length;
        const detail = "agent process exited (code 1)";
        const gone = (id: JsonRpcId) =>
          fail(id, -32800, `Request cancelled: ${detail}`, { reason: "shutdown", detail });
        assert.deepEqual(h.close("agent", detail), [
          to("client", cancelReq(0)),
          to("client", cancelReq(1)),
          to("client", cancelReq(2)),
          to("client", gone(1)),
          to("client", gone(2)),
          to("client", gone(3)),
        ]);
        assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
        // The client's answers to the gone agent, and anything else it says, go nowhere.
        assert.deepEqual(h.client(ok(0, { content: "x" })), []);
        assert.deepEqual(h.client(ok(1, ALLOW)), []);
        assert.deepEqual(h.client(sessionCancel("s")), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 2);
        assert.deepEqual(h.close("agent", "again"), []);
        assert.ok(
          h.log.slice(before).every((d) => d.to === "client"),
          "nothing delivered to the agent after close",
        );
      }));

    it("close(client): the agent's pending requests are answered -32800 naming the detail; the client's are cancelled toward the agent", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/work"));
        h.client(prompt(2, "s"));
        h.agent(readFile(0, "s"));
        h.agent(permission(1, "s"));
        h.agent(req(2, "x/ping"));
        h.agent(readFile(3));
        h.agent(cancelReq(3)); // in grace when the client goes
        h.take();
        const detail = "client disconnected";
        const gone = (id: JsonRpcId) =>
          fail(id, -32800, `Request cancelled: ${detail}`, { reason: "shutdown", detail });
        assert.deepEqual(h.close("client", detail), [
          to("agent", cancelReq(1)),
          to("agent", gone(0)),
          to("agent", gone(1)),
          to("agent", sessionCancel("s")),
          to("agent", gone(2)),
          to("agent", gone(3)),
        ]);
        assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
        assert.deepEqual(h.agent(ok(1, {})), []);
        assert.deepEqual(h.agent(ok(2, { stopReason: "end_turn" })), []);
        assert.equal(h.engine.stats.lateRepliesDropped, 2);
        assert.deepEqual(h.tick(10_000), []);
      }));

    it("close with nothing in flight delivers nothing", () =>
      withEngine({}, (h) => {
        assert.deepEqual(h.close("client", "bye"), []);
        assert.deepEqual(h.close("agent", "bye"), []);
      }));

    it("a request sent toward an agent that is already closed is answered at once, never left hanging", () =>
      withEngine({ graceMs: 100 }, (h) => {
        const detail = "agent process exited (code 1)";
        h.close("agent", detail);
        // The client has not noticed yet and asks for more: nobody will ever answer but us.
        assert.deepEqual(h.client(req(1, "x/work")), [
          to("client", fail(1, -32800, `Request cancelled: ${detail}`, { reason: "shutdown", detail })),
        ]);
        assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
      }));

    it("a request sent toward a client that is already closed is answered at once, never left hanging", () =>
      withEngine({ graceMs: 100 }, (h) => {
        const detail = "the editor closed its input";
        h.close("client", detail);
        assert.deepEqual(h.agent(readFile(1)), [
          to("agent", fail(1, -32800, `Request cancelled: ${detail}`, { reason: "shutdown", detail })),
        ]);
        assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 });
      }));

    it("a held prompt answer is delivered when the agent closes, not replaced by an error", () =>
      withEngine({ graceMs: 100 }, (h) => {
        handshake(h, { client: true, agent: true });
        h.client(prompt(1, "s"));
        h.agent(readFile(1, "s"));
        h.client(sessionCancel("s"));
        h.take();
        // The agent ended the turn as ACP requires; the answer waits for the nested read.
        assert.deepEqual(h.agent(ok(1, { stopReason: "cancelled" })), []);
        // The agent exits before the client answered the read (or grace expired).
        assert.deepEqual(h.close("agent", "agent process exited (code 0)"), [
          to("client", ok(1, PROMPT_CANCELLED)),
        ]);
      }));
  });

  describe("regressions (counterexamples the property tests shrank)", () => {
    it("a garbled reply to a cancelled prompt still ends the turn cancelled", () =>
      withEngine({ graceMs: 0 }, (h) => {
        h.client(prompt(1, "s"));
        h.client(sessionCancel("s"));
        const out = h.agent({ jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "m" } });
        assert.deepEqual(
          out.filter((d) => d.to === "client"),
          [to("client", ok(1, PROMPT_CANCELLED))],
        );
      }));

    it("with a zero grace period, a cancel answered by the handler leaves no timer behind", () =>
      withEngine({ graceMs: 0 }, (h) => {
        h.client(req(1, "x/work"));
        h.client(cancelReq(1));
        h.agent(ok(1, { partial: true }));
        assert.equal(h.clock.countTimers(), 0);
      }));

    it("a request sent toward a side that is gone is answered at once", () =>
      withEngine({}, (h) => {
        h.engine.close("agent", "agent exited with code 1");
        const out = h.client(req(7, "x/work"));
        assert.equal(out.length, 1);
        assert.equal(out[0]?.to, "client");
        assert.match(JSON.stringify(out[0]?.message), /Request cancelled: agent exited with code 1/);
      }));
  });

  describe("bad input", () => {
    it("invalid messages are answered to the sender with -32600 and a specific message", () =>
      withEngine({}, (h) => {
        const cases: [Side, unknown, string][] = [
          ["client", { jsonrpc: "1.0" }, 'missing or wrong "jsonrpc": must be "2.0"'],
          [
            "agent",
            { jsonrpc: "2.0", id: {}, method: "x" },
            'invalid "id": must be a string, a finite number or null, got an object',
          ],
          ["client", 42, "a JSON-RPC message must be an object, got a number"],
          ["agent", [], "JSON-RPC batches are not supported by ACP"],
        ];
        for (const [side, value, problem] of cases) {
          const out = side === "client" ? h.client(value) : h.agent(value);
          assert.deepEqual(out, [to(side, fail(null, -32600, `Invalid request: ${problem}`))], problem);
        }
        assert.deepEqual(
          h.eventsOf("problem"),
          cases.map(([side, , detail]) => ({ type: "problem", side, detail })),
        );
        assert.equal(h.engine.stats.requests, 0);
      }));

    it("a duplicate in-flight id gets -32600 naming the id; the first still completes normally", () =>
      withEngine({ graceMs: 100 }, (h) => {
        assert.deepEqual(h.client(req(1, "x/first")), [to("agent", req(1, "x/first"))]);
        assert.deepEqual(h.client(req(1, "x/second")), [
          to("client", fail(1, -32600, "Invalid request: request id 1 is already in flight")),
        ]);
        h.agent(readFile("a"));
        assert.deepEqual(h.agent(readFile("a")), [
          to("agent", fail("a", -32600, 'Invalid request: request id "a" is already in flight')),
        ]);
        assert.equal(h.engine.job("client", 1)?.payload.method, "x/first");
        assert.deepEqual(h.agent(ok(1, { first: true })), [to("client", ok(1, { first: true }))]);
        assert.deepEqual(h.client(ok("a", { content: "" })), [to("agent", ok("a", { content: "" }))]);
        assert.equal(h.engine.stats.requests, 2);
        assert.deepEqual(
          h.eventsOf("problem").map((e) => [e.side, e.detail]),
          [
            ["client", "request id 1 is already in flight"],
            ["agent", 'request id "a" is already in flight'],
          ],
        );
        // Once answered, the id may be used again.
        assert.deepEqual(h.client(req(1, "x/third")), [to("agent", req(1, "x/third"))]);
        h.agent(ok(1, {}));
      }));

    it("a peer's long string id is cut at 100 characters where an error or event names it", () =>
      withEngine({ graceMs: 100 }, (h) => {
        const long = "x".repeat(1_000_000);
        h.client(req(long, "x/first"));
        const [answer] = h.client(req(long, "x/second"));
        const message = (answer?.message as { error?: { message?: string } } | undefined)?.error?.message ?? "";
        assert.equal(message, `Invalid request: request id "${"x".repeat(99)}… is already in flight`);
        h.client(ok("never-asked", {}));
        const details = h.eventsOf("problem").map((e) => e.detail);
        assert.ok(details.every((detail) => detail.length < 200), "every problem bounded");
        assert.match(details[1] ?? "", /^response to unknown request id "never-asked"$/);
        h.agent(ok(long, {}));
      }));

    it("$/cancel_request with missing or garbled params is ignored", () =>
      withEngine({ graceMs: 100 }, (h) => {
        h.client(req(1, "x/work"));
        const garbled = [
          note("$/cancel_request"),
          note("$/cancel_request", {}),
          note("$/cancel_request", { requestId: { id: 1 } }),
          note("$/cancel_request", { requestId: true }),
          note("$/cancel_request", [1]),
          note("$/cancel_request", { id: 1 }),
        ];
        for (const message of garbled) assert.deepEqual(h.client(message), [], JSON.stringify(message));
        assert.equal(h.engine.job("client", 1)?.isRunning, true);
        assert.equal(h.engine.stats.cancels, 0);
        assert.deepEqual(
          h.eventsOf("problem"),
          garbled.map(() => ({
            type: "problem",
            side: "client",
            detail: "$/cancel_request without a valid params.requestId: ignored",
          })),
        );
        h.agent(ok(1, {}));
      }));

    it("a malformed response is not answered into the sender's own id space; it answers the request it names", () =>
      withEngine({}, (h) => {
        h.client(req(5, "x/work"));
        // The agent answers the client's request 5 with both result and error.
        const out = h.agent({ jsonrpc: "2.0", id: 5, result: {}, error: { code: 1, message: "m" } });
        assert.deepEqual(h.eventsOf("problem"), [
          { type: "problem", side: "agent", detail: 'a response needs exactly one of "result" and "error"' },
        ]);
        // Id 5 names the client's request: the agent never issued a request 5, so it must not get a response 5.
        assert.deepEqual(
          out.filter((d) => d.to === "agent" && "id" in d.message && d.message.id === 5),
          [],
          "a response with an id the agent never issued",
        );
        // The client gets exactly one answer: an error naming what was wrong.
        assert.deepEqual(out, [
          to(
            "client",
            fail(
              5,
              -32603,
              'Invalid response from the peer: a response needs exactly one of "result" and "error"',
            ),
          ),
        ]);
        // A later valid reply for the settled id goes nowhere.
        assert.deepEqual(h.agent(ok(5, { fixed: true })), []);
      }));

    it("a response to an unknown id is dropped", () =>
      withEngine({}, (h) => {
        assert.deepEqual(h.agent(ok(42, {})), []);
        assert.deepEqual(h.client(fail("x", -32000, "no")), []);
        assert.deepEqual(h.eventsOf("problem"), [
          { type: "problem", side: "agent", detail: "response to unknown request id 42" },
          { type: "problem", side: "client", detail: 'response to unknown request id "x"' },
        ]);
        assert.equal(h.engine.stats.lateRepliesDropped, 0);
      }));

    it("other notifications pass through untouched, both ways", () =>
      withEngine({}, (h) => {
        const update = note("session/update", {
          sessionId: "s",
          update: { sessionUpdate: "agent_message_chunk" },
        });
        assert.deepEqual(h.agent(update), [to("client", update)]);
        assert.deepEqual(h.agent(sessionCancel("s")), [to("client", sessionCancel("s"))]);
        assert.deepEqual(h.events, []);
      }));
  });

  describe("property: random schedules", () => {
    it("every request is answered exactly once; nothing is answered or cancelled that the side did not issue or receive", () => {
      fc.assert(fc.property(scenarioArbitrary, runScenario), { numRuns: 1000 });
    });
  });
});

// ---- the property ---------------------------------------------------------------------------

type Action =
  | { kind: "clientRequest"; method: number; session: number }
  | { kind: "agentRequest"; method: number; session: number } // session 3+: a running turn's session
  | { kind: "respond"; pick: number; error: number }
  | { kind: "cancel"; side: Side; target: "own" | "other" | "unknown"; pick: number }
  | { kind: "sessionCancel"; session: number; close: boolean }
  | { kind: "tick"; ms: number };

interface Scenario {
  graceMs: number;
  /** Deadlines per method, a subset of DEADLINES. */
  deadlines: Record<string, number>;
  handshake: { client: boolean; agent: boolean } | null;
  overlapIds: boolean;
  actions: Action[];
  finale: { kind: "close"; side: Side } | { kind: "answerAll" };
}

const SESSIONS = [undefined, "s1", "s2"] as const;
const CLIENT_METHODS = ["session/prompt", "x/work", "session/prompt"] as const;
const AGENT_METHODS = [
  "session/request_permission",
  "fs/read_text_file",
  "terminal/create",
  "x/ask",
] as const;
const DEADLINES: Record<string, number> = { "fs/read_text_file": 70, "session/prompt": 120, "x/work": 30 };

const actionArbitrary: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("clientRequest" as const),
      method: fc.nat(2),
      session: fc.nat(2),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("agentRequest" as const),
      method: fc.nat(3),
      session: fc.nat(5),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("respond" as const), pick: fc.nat(20), error: fc.nat(3) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("cancel" as const),
      side: fc.constantFrom<Side>("client", "agent"),
      target: fc.constantFrom("own" as const, "own" as const, "other" as const, "unknown" as const),
      pick: fc.nat(20),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("sessionCancel" as const),
      session: fc.nat({ max: 1 }),
      close: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.nat(150) }) },
);

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  graceMs: fc.constantFrom(0, 40, 100),
  deadlines: fc
    .subarray(Object.keys(DEADLINES))
    .map((methods) => Object.fromEntries(methods.map((method) => [method, DEADLINES[method] ?? 0]))),
  handshake: fc.option(fc.record({ client: fc.boolean(), agent: fc.boolean() })),
  overlapIds: fc.boolean(),
  actions: fc.array(actionArbitrary, { minLength: 1, maxLength: 60, size: "medium" }),
  finale: fc.oneof(
    fc.record({ kind: fc.constant("close" as const), side: fc.constantFrom<Side>("client", "agent") }),
    fc.record({ kind: fc.constant("answerAll" as const) }),
  ),
});

interface Issued {
  method: string;
  sessionId: string | undefined;
  /** Clock time and step number when issued. */
  at: number;
  step: number;
  /** The client prompt it nests under (agent requests of a running turn). */
  parent: JsonRpcId | undefined;
  /** A prompt whose cancel reached the engine while it was unanswered. */
  cancelledWhileOpen: boolean;
}

const isResponse = (m: JsonRpcMessage): m is JsonRpcResponse => "id" in m && !("method" in m);
const isRequest = (m: JsonRpcMessage): m is JsonRpcRequest => "id" in m && "method" in m;

function runScenario(scenario: Scenario): void {
  const { clock, restore } = fakeClock();
  try {
    runScenarioOn(clock, scenario);
  } finally {
    restore();
  }
}

function runScenarioOn(clock: sinon.SinonFakeTimers, scenario: Scenario): void {
  const perSide = <T>(make: () => T): Record<Side, T> => ({ client: make(), agent: make() });
  const issued = perSide(() => new Map<JsonRpcId, Issued>());
  /** Requests delivered to a side that it has not answered yet, in delivery order. */
  const owed = perSide(() => [] as JsonRpcId[]);
  const deliveredRequests = perSide(() => new Set<JsonRpcId>());
  const responses = perSide(() => new Map<JsonRpcId, number>());
  const cancelsDelivered = perSide(() => new Set<JsonRpcId>());
  const cancelAsked = perSide(() => new Map<JsonRpcId, number>());
  const sessionCancels: { sessionId: string; step: number }[] = [];
  const turns = new Map<string, JsonRpcId>();
  const handlerWrote = new WeakSet<object>();
  const nextId = { client: 1, agent: scenario.overlapIds ? 1 : 101 };
  let closedSide: Side | undefined;
  let step = 0;
  let deliveredNow: Delivery[] = [];
  /** Handler replies that came after the engine had answered for them. */
  let lateReplies = 0;

  /** Why a request of `issuer` may legitimately be cancelled now. */
  const justified = (issuer: Side, id: JsonRpcId): boolean => {
    const record = issued[issuer].get(id);
    if (record === undefined) return false;
    if (closedSide === issuer) return true;
    const asked = cancelAsked[issuer].get(id);
    if (asked !== undefined && asked >= record.step) return true;
    if (
      record.sessionId !== undefined &&
      sessionCancels.some((c) => c.sessionId === record.sessionId && c.step >= record.step)
    )
      return true;
    const deadline = scenario.deadlines[record.method];
    if (deadline !== undefined && clock.now - record.at >= deadline) return true;
    return record.parent !== undefined && justified("client", record.parent);
  };

  const deliver = (side: Side, message: JsonRpcMessage): void => {
    deliveredNow.push({ to: side, message });
    const where = `step ${step}: to ${side} ${JSON.stringify(message)}`;
    assert.notEqual(side, closedSide, `delivered to the closed side: ${where}`);
    if (isResponse(message)) {
      const record = issued[side].get(message.id);
      assert.ok(record, `response for an id the side never issued: ${where}`);
      const count = (responses[side].get(message.id) ?? 0) + 1;
      responses[side].set(message.id, count);
      assert.equal(count, 1, `second response: ${where}`);
      if (record.method === "session/prompt" && record.sessionId !== undefined) {
        if (turns.get(record.sessionId) === message.id) turns.delete(record.sessionId);
        if (record.cancelledWhileOpen && closedSide === undefined) {
          assert.ok("result" in message, `cancelled prompt answered with an error: ${where}`);
          assert.equal((message.result as { stopReason?: unknown }).stopReason, "cancelled", where);
          // A cancelled turn ends only after every request nested under it was answered.
          for (const [nestedId, nested] of issued.agent) {
            if (nested.parent === message.id)
              assert.ok(responses.agent.has(nestedId), `turn ended before nested ${nestedId}: ${where}`);
          }
        }
      }
      if (record.method === "session/request_permission" && "result" in message) {
        const outcome = (message.result as { outcome?: { outcome?: unknown } }).outcome?.outcome;
        if (outcome !== "cancelled") {
          assert.ok(handlerWrote.has(message), `invented permission outcome: ${where}`);
          assert.ok(!cancelsDelivered[otherSide(side)].has(message.id), `allow after a cancel: ${where}`);
        }
      }
      if ("error" in message && message.error.code === -32800 && !handlerWrote.has(message)) {
        const reason = (message.error.data as { reason?: unknown } | undefined)?.reason;
        assert.ok(CANCEL_REASONS.includes(reason as never), `-32800 without a reason: ${where}`);
      }
    } else if (isRequest(message)) {
      assert.ok(issued[otherSide(side)].has(message.id), `request never issued: ${where}`);
      assert.ok(!deliveredRequests[side].has(message.id), `request delivered twice: ${where}`);
      deliveredRequests[side].add(message.id);
      owed[side].push(message.id);
    } else if (message.method === "$/cancel_request") {
      const id = (message.params as { requestId: JsonRpcId }).requestId;
      const issuer = otherSide(side);
      assert.ok(deliveredRequests[side].has(id), `cancel for a request the side never received: ${where}`);
      assert.ok(!responses[issuer].has(id), `cancel after the issuer was answered: ${where}`);
      assert.ok(!cancelsDelivered[side].has(id), `second cancel for one request: ${where}`);
      assert.ok(justified(issuer, id), `cancel nobody asked for: ${where}`);
      cancelsDelivered[side].add(id);
      // The engine is cancelling this turn (deadline, cascade...): it must end cancelled.
      if (issuer === "client") markPromptCancelled(id);
    } else if (message.method === "session/cancel") {
      assert.equal(side, "agent", where);
      const sessionId = (message.params as { sessionId: string }).sessionId;
      const forwarded = sessionCancels.some((c) => c.sessionId === sessionId && c.step === step);
      const emulated = [...issued.client].some(
        ([id, r]) => r.method === "session/prompt" && r.sessionId === sessionId && justified("client", id),
      );
      assert.ok(forwarded || emulated, `session/cancel out of nowhere: ${where}`);
    } else {
      assert.fail(`unexpected delivery: ${where}`);
    }
  };

  const engine = new CancelEngine(deliver, {
    graceMs: scenario.graceMs,
    deadlines: scenario.deadlines,
  });

  const issue = (side: Side, method: string, params: Record<string, unknown>, id = nextId[side]++): void => {
    const sessionId = typeof params.sessionId === "string" ? params.sessionId : undefined;
    const parent = side === "agent" && sessionId !== undefined ? turns.get(sessionId) : undefined;
    issued[side].set(id, { method, sessionId, at: clock.now, step, parent, cancelledWhileOpen: false });
    if (side === "client" && method === "session/prompt" && sessionId !== undefined) turns.set(sessionId, id);
    deliveredNow = [];
    engine.receive(side, req(id, method, params));
    const passed = deliveredRequests[otherSide(side)].has(id);
    const answered = responses[side].has(id);
    assert.ok(passed !== answered, `step ${step}: request ${id} neither passed nor answered at once`);
    if (answered)
      assert.ok(justified(side, id), `step ${step}: request ${id} cancelled at birth for no reason`);
  };

  const respond = (handler: Side, id: JsonRpcId, error: number): void => {
    owed[handler] = owed[handler].filter((owedId) => owedId !== id);
    const record = issued[otherSide(handler)].get(id);
    assert.ok(record);
    let message: JsonRpcResponse;
    if (error === 1) message = fail(id, -32000, "boom");
    else if (error === 2) message = fail(id, -32800, "handler stopped");
    else if (record.method === "session/prompt") message = ok(id, { stopReason: "end_turn" });
    else if (record.method === "session/request_permission") message = ok(id, ALLOW);
    else if (record.method === "initialize")
      message = ok(id, {
        protocolVersion: 1,
        agentCapabilities: scenario.handshake?.agent ? { _meta: { [CAPABILITY_KEY]: CAP } } : {},
      });
    else message = ok(id, { content: "done" });
    handlerWrote.add(message);
    const issuer = otherSide(handler);
    const late = responses[issuer].has(id) || closedSide === issuer;
    if (late) lateReplies++;
    deliveredNow = [];
    engine.receive(handler, message);
    if (late) assert.deepEqual(deliveredNow, [], `step ${step}: a late reply to ${String(id)} was delivered`);
  };

  const markPromptCancelled = (id: JsonRpcId | undefined): void => {
    const record = id === undefined ? undefined : issued.client.get(id);
    if (record?.method === "session/prompt" && id !== undefined && !responses.client.has(id))
      record.cancelledWhileOpen = true;
  };

  if (scenario.handshake !== null) {
    const meta = scenario.handshake.client ? { _meta: { [CAPABILITY_KEY]: CAP } } : {};
    issue("client", "initialize", { protocolVersion: 1, clientCapabilities: meta }, 0);
    respond("agent", 0, 0);
  }

  for (const action of scenario.actions) {
    step++;
    switch (action.kind) {
      case "clientRequest": {
        const method = CLIENT_METHODS[action.method] ?? "x/work";
        const sessionId = SESSIONS[action.session] ?? (method === "session/prompt" ? "s1" : undefined);
        issue("client", method, sessionId === undefined ? {} : { sessionId });
        break;
      }
      case "agentRequest": {
        const method = AGENT_METHODS[action.method] ?? "x/ask";
        const running = [...turns.keys()];
        const sessionId =
          action.session >= 3
            ? running[action.method % Math.max(1, running.length)]
            : SESSIONS[action.session];
        issue("agent", method, sessionId === undefined ? {} : { sessionId });
        break;
      }
      case "respond": {
        const pending = [
          ...owed.client.map((id) => ["client", id] as const),
          ...owed.agent.map((id) => ["agent", id] as const),
        ];
        const chosen = pending[action.pick % Math.max(1, pending.length)];
        if (chosen !== undefined) respond(chosen[0], chosen[1], action.error);
        break;
      }
      case "cancel": {
        const pool =
          action.target === "unknown"
            ? [999, "nope"]
            : [...issued[action.target === "own" ? action.side : otherSide(action.side)].keys()];
        const id = pool[action.pick % Math.max(1, pool.length)] ?? 999;
        cancelAsked[action.side].set(id, step);
        if (action.side === "client") markPromptCancelled(id);
        engine.receive(action.side, cancelReq(id));
        break;
      }
      case "sessionCancel": {
        const sessionId = action.session === 0 ? "s1" : "s2";
        sessionCancels.push({ sessionId, step });
        markPromptCancelled(turns.get(sessionId));
        // session/close (a request) cancels the session's turn like session/cancel does.
        if (action.close) issue("client", "session/close", { sessionId });
        else engine.receive("client", sessionCancel(sessionId));
        break;
      }
      case "tick":
        clock.tick(action.ms);
        break;
    }
    // A permission request whose cancel reached the client is answered to the agent at once.
    if (closedSide === undefined) {
      for (const id of cancelsDelivered.client) {
        if (issued.agent.get(id)?.method === "session/request_permission")
          assert.ok(responses.agent.has(id), `step ${step}: cancelled permission ${id} left unanswered`);
      }
    }
  }

  step++;
  if (scenario.finale.kind === "close") {
    const gone = scenario.finale.side;
    const survivor = otherSide(gone);
    closedSide = gone;
    turns.clear();
    engine.close(gone, "gone");
    assert.deepEqual(engine.inFlight, { client: 0, agent: 0 }, "in flight right after close");
    // The survivor's answers to the gone side are late replies: nothing is delivered.
    deliveredNow = [];
    for (const id of [...owed[survivor]]) respond(survivor, id, 0);
    assert.deepEqual(deliveredNow, [], "the survivor's late answers went somewhere");
    clock.runAll();
    for (const id of issued[survivor].keys())
      assert.equal(responses[survivor].get(id), 1, `${survivor} request ${String(id)} answered once`);
  } else {
    while (owed.client.length + owed.agent.length > 0) {
      for (const side of ["client", "agent"] as const) for (const id of [...owed[side]]) respond(side, id, 0);
    }
    // Every handler has answered: the engine has nothing left to wait for.
    assert.deepEqual(engine.inFlight, { client: 0, agent: 0 }, "in flight after everything was answered");
    assert.equal(clock.countTimers(), 0, `timers after everything was answered: ${describeTimers(clock)}`);
    clock.runAll();
    for (const side of ["client", "agent"] as const)
      for (const id of issued[side].keys())
        assert.equal(responses[side].get(id), 1, `${side} request ${String(id)} answered once`);
  }
  assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
  assert.equal(clock.countTimers(), 0, `no stray timers: ${describeTimers(clock)}`);
  assert.equal(engine.stats.lateRepliesDropped, lateReplies, "late replies counted");
}
