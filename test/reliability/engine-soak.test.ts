/**
 * Random schedules against the real CancelEngine: requests both ways (string and number ids,
 * overlapping id spaces), answers of every kind, silent handlers, duplicate and late answers,
 * duplicate request ids, $/cancel_request for own, cross-direction, answered and unknown ids,
 * an app's own cancel, session/cancel and session/close, deadlines and grace on a fake clock,
 * three placements (bridge, embedded agent, embedded client), then close or drain.
 *
 * 1,000 schedules by default, 100,000 under ACP_CANCEL_SOAK.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import sinon from "sinon";
import { CancelEngine, type EngineEvent, type EngineOptions } from "../../src/index.js";
import { CAPABILITY_KEY, type CancelSupport, otherSide, type Side } from "../../src/acp/index.js";
import type { JsonRpcId, JsonRpcMessage, JsonRpcResponse } from "../../src/wire/index.js";
import { checkParameters, figure, scaled } from "./support.js";

// ---- the schedule language ------------------------------------------------------------------

const CLIENT_METHODS = ["session/prompt", "x/work", "session/prompt", "x/search"] as const;
const AGENT_METHODS = [
  "session/request_permission",
  "fs/read_text_file",
  "x/ask",
  "terminal/wait_for_exit",
] as const;
const SESSIONS = ["s1", "s2", undefined] as const;
const DEADLINES: Record<string, number> = {
  "fs/read_text_file": 60,
  "session/prompt": 150,
  "x/work": 25,
  "terminal/wait_for_exit": 90,
};
const CAP = { version: 1, cancelRequest: true, cascade: true, sessionCancel: true };

type Placement = "bridge" | "embedded-agent" | "embedded-client";
type AnswerStyle = "ok" | "error" | "cancelled" | "cancelledWithReason" | "garbled";

type Action =
  | { kind: "request"; side: Side; method: number; session: number; silent: boolean; stringId: boolean }
  | { kind: "respond"; pick: number; style: AnswerStyle }
  | { kind: "answerAgain"; pick: number }
  | { kind: "wake"; pick: number }
  | { kind: "duplicateRequest"; side: Side; pick: number }
  | { kind: "cancel"; side: Side; target: "own" | "other" | "unknown" | "answered"; pick: number }
  | { kind: "selfCancel"; side: Side; pick: number }
  | { kind: "sessionCancel"; session: number; close: boolean }
  | { kind: "tick"; ms: number };

interface Scenario {
  placement: Placement;
  support: Record<Side, CancelSupport>;
  graceMs: number;
  deadlines: Record<string, number>;
  handshake: { client: boolean; agent: boolean } | null;
  overlapIds: boolean;
  /** The engine's `promptStopsTurn`: a prompt into a running turn adds the session/cancel the client left out. */
  promptStopsTurn: boolean;
  actions: Action[];
  finale: { kind: "close"; side: Side } | { kind: "drain" };
}

const side = fc.constantFrom<Side>("client", "agent");

function actionArbitrary(garbled: boolean): fc.Arbitrary<Action> {
  const styles: AnswerStyle[] = ["ok", "ok", "ok", "error", "cancelled", "cancelledWithReason"];
  if (garbled) styles.push("garbled", "garbled");
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("request" as const),
        side,
        method: fc.nat(3),
        session: fc.nat(2),
        silent: fc.nat(3).map((n) => n === 0),
        stringId: fc.boolean(),
      }),
    },
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("respond" as const),
        pick: fc.nat(30),
        style: fc.constantFrom(...styles),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("answerAgain" as const), pick: fc.nat(30) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("wake" as const), pick: fc.nat(30) }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("duplicateRequest" as const), side, pick: fc.nat(30) }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("cancel" as const),
        side,
        target: fc.constantFrom("own" as const, "own" as const, "other" as const, "unknown" as const, "answered" as const),
        pick: fc.nat(30),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("selfCancel" as const), side, pick: fc.nat(30) }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant("sessionCancel" as const), session: fc.nat(1), close: fc.boolean() }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.nat(120) }) },
  );
}

function scenarioArbitrary(garbled: boolean): fc.Arbitrary<Scenario> {
  const support = fc.constantFrom<CancelSupport>("auto", "auto", "yes", "no");
  return fc.record({
    placement: fc.constantFrom<Placement>("bridge", "bridge", "embedded-agent", "embedded-client"),
    support: fc.record({ client: support, agent: support }),
    graceMs: fc.constantFrom(0, 30, 100),
    deadlines: fc
      .subarray(Object.keys(DEADLINES))
      .map((methods) => Object.fromEntries(methods.map((m) => [m, DEADLINES[m] ?? 0]))),
    handshake: fc.option(fc.record({ client: fc.boolean(), agent: fc.boolean() })),
    overlapIds: fc.boolean(),
    promptStopsTurn: fc.boolean(),
    actions: fc.array(actionArbitrary(garbled), { minLength: 1, maxLength: 80, size: "medium" }),
    finale: fc.oneof(
      fc.record({ kind: fc.constant("close" as const), side }),
      fc.record({ kind: fc.constant("drain" as const) }),
    ),
  });
}

// ---- the model --------------------------------------------------------------------------------

/** One request, as its issuer sent it (an id can be reused once its request is done). */
interface Issued {
  readonly issuer: Side;
  readonly id: JsonRpcId;
  readonly method: string;
  readonly sessionId: string | undefined;
  readonly step: number;
  readonly at: number;
  /** The client prompt it nests under (an agent request during a turn). */
  readonly parent: Issued | undefined;
  readonly silent: boolean;
  delivered: boolean;
  /** How many answers the issuer got (must end at exactly 1). */
  answers: number;
  /** The engine emitted a cancel for it (before its answer). */
  cancelled: boolean;
  /** The handler wrote an answer (once or more). */
  handlerAnswered: boolean;
  lastHandlerAnswer: JsonRpcResponse | undefined;
  cancelAsked: boolean;
  selfCancelled: boolean;
  /** The handler's last answer was malformed (both result and error). */
  garbled: boolean;
  /** A $/cancel_request for it reached the handler. */
  cancelDelivered: boolean;
}

export interface Totals {
  schedules: number;
  steps: number;
  requests: number;
  cancels: number;
  answeredForPeer: number;
  lateRepliesDropped: number;
  duplicates: number;
}

const isResponse = (m: JsonRpcMessage): m is JsonRpcResponse => "id" in m && !("method" in m);
const isRequest = (m: JsonRpcMessage) => "id" in m && "method" in m;

function fakeClock(): { clock: sinon.SinonFakeTimers; restore: () => void } {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
  });
  return { clock, restore: () => sandbox.restore() };
}

function ports(s: Scenario): Pick<EngineOptions, "client" | "agent"> {
  const port = (which: Side) => ({
    cancelSupport: s.support[which],
    ...(s.placement === `embedded-${which}` ? { inProcess: true } : {}),
  });
  return { client: port("client"), agent: port("agent") };
}

/** Runs one schedule, asserting every invariant at every step. */
export function runSchedule(scenario: Scenario, totals: Totals): void {
  const { clock, restore } = fakeClock();
  try {
    new Schedule(scenario, clock, totals).run();
  } finally {
    restore();
  }
}

class Schedule {
  private readonly all: Issued[] = [];
  /** The in-flight request of each (issuer, id): the one the engine's table holds. */
  private readonly current: Record<Side, Map<JsonRpcId, Issued>> = { client: new Map(), agent: new Map() };
  /** Requests delivered to a side that it has not answered yet; silent ones wait for `wake`. */
  private readonly owed: Issued[] = [];
  private readonly turns = new Map<string, Issued>();
  private readonly sessionCancels: { sessionId: string; step: number }[] = [];
  /** The session of the engine's latest `idle-cancel-dropped` event. */
  private idleCancelDropped: string | undefined;
  private readonly handlerWrote = new WeakSet<object>();
  private readonly engine: CancelEngine;
  private readonly nextId: Record<Side, number>;
  private closed: Side | undefined;
  private step = 0;
  /** Everything delivered during the current step. */
  private now: { to: Side; message: JsonRpcMessage }[] = [];
  private cancelEventsNow: Issued[] = [];
  private expectDuplicateError: { side: Side; id: JsonRpcId } | undefined;
  private lateReplies = 0;

  constructor(
    private readonly s: Scenario,
    private readonly clock: sinon.SinonFakeTimers,
    private readonly totals: Totals,
  ) {
    this.nextId = { client: 1, agent: s.overlapIds ? 1 : 1001 };
    this.engine = new CancelEngine((to, message) => this.deliver(to, message), {
      graceMs: s.graceMs,
      deadlines: s.deadlines,
      promptStopsTurn: s.promptStopsTurn,
      ...ports(s),
      onEvent: (event) => this.onEvent(event),
    });
  }

  private where(extra = ""): string {
    return `step ${this.step} (${this.s.placement}) ${extra}`;
  }

  // ---- oracles ------------------------------------------------------------------------------

  /** Whether something the schedule did allows the engine to cancel `r` now. */
  private justified(r: Issued): boolean {
    if (this.closed !== undefined) return true;
    if (r.cancelAsked || r.selfCancelled) return true;
    if (r.sessionId !== undefined && this.sessionCancels.some((c) => c.sessionId === r.sessionId && c.step >= r.step))
      return true;
    const deadline = this.s.deadlines[r.method];
    if (deadline !== undefined && this.clock.now - r.at >= deadline) return true;
    return r.parent !== undefined && this.justified(r.parent);
  }

  private onEvent(event: EngineEvent): void {
    if (event.type === "idle-cancel-dropped") this.idleCancelDropped = event.sessionId;
    if (event.type !== "cancel" && event.type !== "cancelled-at-birth") return;
    const r = this.current[event.side].get(event.id);
    assert.ok(r, this.where(`cancel event for a request ${event.side} does not have in flight: ${String(event.id)}`));
    assert.equal(r.answers, 0, this.where(`cancel after the answer: ${String(event.id)}`));
    assert.ok(!r.cancelled, this.where(`second cancel event for ${event.side} #${String(event.id)}`));
    assert.ok(this.justified(r), this.where(`cancel nobody asked for: ${event.side} #${String(event.id)}`));
    r.cancelled = true;
    this.cancelEventsNow.push(r);
    this.totals.cancels++;
  }

  private deliver(to: Side, message: JsonRpcMessage): void {
    const where = this.where(`to ${to} ${JSON.stringify(message)}`);
    this.now.push({ to, message });
    assert.notEqual(to, this.closed, `delivered to the closed side: ${where}`);
    if (isResponse(message)) return this.onAnswer(to, message, where);
    if (isRequest(message)) {
      const r = this.current[otherSide(to)].get((message as { id: JsonRpcId }).id);
      assert.ok(r, `request never issued: ${where}`);
      assert.ok(!r.delivered, `request delivered twice: ${where}`);
      r.delivered = true;
      this.owed.push(r);
      return;
    }
    const { method, params } = message as { method: string; params?: unknown };
    if (method === "$/cancel_request") {
      const id = (params as { requestId: JsonRpcId }).requestId;
      const r = this.current[otherSide(to)].get(id);
      // Never across direction: it names a request `to` received from the other side.
      assert.ok(r?.delivered, `cancel for a request ${to} never received: ${where}`);
      assert.equal(r.answers, 0, `cancel after the issuer was answered: ${where}`);
      assert.ok(r.cancelled, `cancel sent for a job the engine did not cancel: ${where}`);
      assert.ok(!r.cancelDelivered, `second cancel for one request: ${where}`);
      assert.notEqual(this.s.support[to], "no", `$/cancel_request sent to a side marked without support: ${where}`);
      r.cancelDelivered = true;
      return;
    }
    if (method === "session/cancel") {
      assert.equal(to, "agent", where);
      const sessionId = (params as { sessionId: string }).sessionId;
      const forwarded = this.sessionCancels.some((c) => c.sessionId === sessionId && c.step === this.step);
      const emulated = this.all.some(
        (r) => r.method === "session/prompt" && r.sessionId === sessionId && r.cancelled && r.answers === 0,
      );
      assert.ok(forwarded || emulated, `session/cancel out of nowhere: ${where}`);
      return;
    }
    assert.fail(`unexpected delivery: ${where}`);
  }

  private onAnswer(to: Side, message: JsonRpcResponse, where: string): void {
    const dup = this.expectDuplicateError;
    if (dup !== undefined && dup.side === to && dup.id === message.id && "error" in message) {
      assert.equal(message.error.code, -32600, where);
      assert.match(message.error.message, /already in flight/, where);
      assert.ok(message.error.message.includes(JSON.stringify(message.id)), `names the id: ${where}`);
      this.expectDuplicateError = undefined;
      return;
    }
    const r = this.current[to].get(message.id);
    assert.ok(r, `answer for a request ${to} does not have in flight: ${where}`);
    r.answers++;
    assert.equal(r.answers, 1, `second answer: ${where}`);
    this.current[to].delete(message.id);
    if (r.sessionId !== undefined && this.turns.get(r.sessionId) === r) this.turns.delete(r.sessionId);
    const handlerGone = this.closed === otherSide(to);
    const abandoned =
      "error" in message &&
      message.error.code === -32800 &&
      (message.error.data as { reason?: unknown } | undefined)?.reason === "shutdown";
    if (handlerGone && abandoned) return; // the handler side is gone: an error naming why
    if (!r.cancelled) {
      // Not cancelled: exactly what the handler wrote (initialize gets our capability added,
      // a malformed answer becomes -32603 naming the problem).
      if (r.method === "initialize") assert.ok("result" in message, where);
      else if (r.garbled)
        assert.ok("error" in message && message.error.code === -32603, `garbled answer: ${where}`);
      else assert.ok(this.handlerWrote.has(message), `an answer the handler did not write: ${where}`);
      return;
    }
    // Cancelled: normalised, whoever answered.
    if (r.method === "session/prompt") {
      assert.ok("result" in message, `cancelled prompt answered with an error: ${where}`);
      assert.equal((message.result as { stopReason?: unknown }).stopReason, "cancelled", where);
      // A cancelled turn ends after everything nested under it (whose issuer can still hear).
      for (const nested of this.all)
        if (nested.parent === r && nested.issuer !== this.closed)
          assert.equal(nested.answers, 1, `turn ended before nested #${String(nested.id)}: ${where}`);
    } else if (r.method === "session/request_permission") {
      assert.ok("result" in message, `cancelled permission answered with an error: ${where}`);
      const outcome = (message.result as { outcome?: { outcome?: unknown } }).outcome?.outcome;
      assert.equal(outcome, "cancelled", `cancelled permission answered ${String(outcome)}: ${where}`);
    } else if ("result" in message) {
      assert.ok(this.handlerWrote.has(message), `a result the handler did not write: ${where}`);
    } else {
      assert.equal(message.error.code, -32800, `cancelled request answered with another error: ${where}`);
      const reason = (message.error.data as { reason?: unknown } | undefined)?.reason;
      assert.equal(typeof reason, "string", `-32800 without data.reason: ${where}`);
    }
  }

  // ---- actions ------------------------------------------------------------------------------

  private begin(): void {
    this.now = [];
    this.cancelEventsNow = [];
  }

  private issue(from: Side, method: string, sessionId: string | undefined, silent: boolean, id?: JsonRpcId): void {
    const requestId = id ?? this.nextId[from]++;
    const parent = from === "agent" && sessionId !== undefined ? this.turns.get(sessionId) : undefined;
    const r: Issued = {
      issuer: from,
      id: requestId,
      method,
      sessionId,
      step: this.step,
      at: this.clock.now,
      parent,
      silent,
      delivered: false,
      answers: 0,
      cancelled: false,
      handlerAnswered: false,
      lastHandlerAnswer: undefined,
      cancelAsked: false,
      selfCancelled: false,
      garbled: false,
      cancelDelivered: false,
    };
    this.all.push(r);
    this.current[from].set(requestId, r);
    if (from === "client" && method === "session/prompt" && sessionId !== undefined) {
      const running = this.turns.get(sessionId);
      if (this.s.promptStopsTurn && running !== undefined && !running.cancelled && running.answers === 0) {
        this.sessionCancels.push({ sessionId, step: this.step });
      }
      this.turns.set(sessionId, r);
    }
    const params: Record<string, unknown> = sessionId === undefined ? {} : { sessionId };
    if (method === "initialize") {
      params.protocolVersion = 1;
      params.clientCapabilities = this.s.handshake?.client ? { _meta: { [CAPABILITY_KEY]: CAP } } : {};
    }
    this.begin();
    this.totals.requests++;
    this.engine.receive(from, { jsonrpc: "2.0", id: requestId, method, params });
    assert.ok(r.delivered !== (r.answers > 0), this.where(`request ${String(requestId)} neither passed nor answered`));
    if (r.answers > 0) assert.ok(r.cancelled, this.where(`request ${String(requestId)} answered at birth, not cancelled`));
  }

  private answerFor(r: Issued, style: AnswerStyle): JsonRpcResponse {
    const id = r.id;
    if (style === "error") return { jsonrpc: "2.0", id, error: { code: -32000, message: "boom" } };
    if (style === "cancelled") return { jsonrpc: "2.0", id, error: { code: -32800, message: "stopped" } };
    if (style === "cancelledWithReason")
      return { jsonrpc: "2.0", id, error: { code: -32800, message: "gave up", data: { reason: "internal" } } };
    if (style === "garbled")
      return { jsonrpc: "2.0", id, result: {}, error: { code: 1, message: "both" } } as unknown as JsonRpcResponse;
    if (r.method === "session/prompt") return { jsonrpc: "2.0", id, result: { stopReason: "end_turn" } };
    if (r.method === "session/request_permission")
      return { jsonrpc: "2.0", id, result: { outcome: { outcome: "selected", optionId: "allow" } } };
    if (r.method === "initialize")
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: 1,
          agentCapabilities: this.s.handshake?.agent ? { _meta: { [CAPABILITY_KEY]: CAP } } : {},
        },
      };
    return { jsonrpc: "2.0", id, result: { content: "done" } };
  }

  /** The handler of `r` writes an answer. */
  private respond(r: Issued, style: AnswerStyle): void {
    const handler = otherSide(r.issuer);
    const index = this.owed.indexOf(r);
    if (index !== -1) this.owed.splice(index, 1);
    const message = this.answerFor(r, style);
    this.handlerWrote.add(message);
    const late = r.answers > 0 || this.closed === r.issuer;
    const again = r.handlerAnswered;
    r.handlerAnswered = true;
    r.lastHandlerAnswer = message;
    r.garbled = style === "garbled";
    this.begin();
    const dropped = this.engine.stats.lateRepliesDropped;
    this.engine.receive(handler, message);
    if (late || again) {
      assert.deepEqual(this.now, [], this.where(`a late or repeated answer to ${String(r.id)} was delivered`));
      if (this.engine.stats.lateRepliesDropped > dropped) this.lateReplies++;
      return;
    }
    if (style === "garbled" && !r.cancelled) {
      // A malformed answer to a running request: the issuer gets -32603 naming the problem.
      const got = this.now.find((d) => d.to === r.issuer && isResponse(d.message) && d.message.id === r.id);
      assert.ok(got && "error" in got.message && got.message.error.code === -32603, this.where("garbled"));
      return;
    }
    const answered = this.now.some((d) => d.to === r.issuer && isResponse(d.message) && d.message.id === r.id);
    if (!answered) {
      // Only a cancelled job with nested work still open may hold its answer.
      assert.ok(r.cancelled, this.where(`the answer to running ${String(r.id)} was not delivered`));
      const open = this.all.some((n) => n.parent === r && n.answers === 0);
      assert.ok(open, this.where(`the answer to ${String(r.id)} held with nothing nested open`));
    }
  }

  private pick<T>(items: readonly T[], n: number): T | undefined {
    return items.length === 0 ? undefined : items[n % items.length];
  }

  private act(action: Action): void {
    switch (action.kind) {
      case "request": {
        const methods = action.side === "client" ? CLIENT_METHODS : AGENT_METHODS;
        const method = methods[action.method % methods.length] ?? "x/work";
        let sessionId: string | undefined = SESSIONS[action.session];
        if (method === "session/prompt") sessionId ??= "s1";
        if (action.side === "agent" && action.session === 2) sessionId = this.pick([...this.turns.keys()], action.method);
        const id = action.stringId ? `${action.side[0]}-${this.nextId[action.side]++}` : undefined;
        this.issue(action.side, method, sessionId, action.silent, id);
        return;
      }
      case "respond": {
        const r = this.pick(
          this.owed.filter((o) => !o.silent),
          action.pick,
        );
        if (r !== undefined) this.respond(r, action.style);
        return;
      }
      case "wake": {
        const r = this.pick(
          this.owed.filter((o) => o.silent),
          action.pick,
        );
        if (r !== undefined) this.respond(r, "ok");
        return;
      }
      case "answerAgain": {
        const r = this.pick(
          this.all.filter((o) => o.handlerAnswered && o.lastHandlerAnswer !== undefined),
          action.pick,
        );
        if (r?.lastHandlerAnswer === undefined) return;
        this.totals.duplicates++;
        this.begin();
        this.engine.receive(otherSide(r.issuer), { ...r.lastHandlerAnswer });
        assert.deepEqual(this.now, [], this.where(`a repeated answer to ${String(r.id)} was delivered`));
        return;
      }
      case "duplicateRequest": {
        const r = this.pick([...this.current[action.side].values()], action.pick);
        if (r === undefined) return;
        this.totals.duplicates++;
        this.begin();
        this.expectDuplicateError = { side: action.side, id: r.id };
        this.engine.receive(action.side, { jsonrpc: "2.0", id: r.id, method: "x/again", params: {} });
        assert.equal(this.expectDuplicateError, undefined, this.where(`no -32600 for duplicate ${String(r.id)}`));
        assert.equal(this.now.length, 1, this.where("a duplicate id caused more than its error"));
        assert.equal(this.cancelEventsNow.length, 0, this.where("a duplicate id cancelled something"));
        return;
      }
      case "cancel": {
        const own = [...this.current[action.side].keys()];
        const pool: JsonRpcId[] =
          action.target === "own"
            ? own
            : action.target === "other"
              ? [...this.current[otherSide(action.side)].keys()]
              : action.target === "answered"
                ? this.all.filter((r) => r.issuer === action.side && r.answers > 0).map((r) => r.id)
                : [999_999, "nope", null];
        const id = this.pick(pool, action.pick) ?? 424_242;
        const target = this.current[action.side].get(id);
        if (target !== undefined) target.cancelAsked = true;
        this.begin();
        this.engine.receive(action.side, { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
        if (target === undefined) {
          // Unknown, answered, or the other side's id: nothing at all happens.
          assert.deepEqual(this.now, [], this.where(`cancel of ${String(id)} not in ${action.side}'s table delivered`));
          assert.deepEqual(this.cancelEventsNow, [], this.where("a cancel crossed direction"));
        } else {
          for (const r of this.cancelEventsNow)
            assert.ok(r === target || this.descends(r, target), this.where(`cancel of ${String(id)} reached ${r.issuer} #${String(r.id)}`));
        }
        return;
      }
      case "selfCancel": {
        const r = this.pick([...this.current[action.side].values()], action.pick);
        if (r === undefined) return;
        r.selfCancelled = true;
        this.begin();
        this.engine.cancel(action.side, r.id, "internal");
        return;
      }
      case "sessionCancel": {
        const sessionId = action.session === 0 ? "s1" : "s2";
        this.sessionCancels.push({ sessionId, step: this.step });
        if (action.close) {
          this.issue("client", "session/close", sessionId, false);
        } else {
          this.begin();
          this.idleCancelDropped = undefined;
          const note = { jsonrpc: "2.0" as const, method: "session/cancel", params: { sessionId } };
          this.engine.receive("client", note);
          const forwarded = this.now.some((d) => d.to === "agent" && d.message === note);
          // Not forwarded only when nothing of the session is in flight (a late Stop, decisions.md "Sessions").
          const inFlight = (["client", "agent"] as const).some((side) =>
            [...this.current[side].values()].some((r) => r.sessionId === sessionId),
          );
          if (this.idleCancelDropped === sessionId) assert.ok(!forwarded && !inFlight, this.where("session/cancel dropped with its session busy"));
          else assert.ok(forwarded, this.where("session/cancel not forwarded"));
        }
        return;
      }
      case "tick":
        this.begin();
        this.clock.tick(action.ms);
        return;
    }
  }

  private descends(r: Issued, ancestor: Issued): boolean {
    for (let p = r.parent; p !== undefined; p = p.parent) if (p === ancestor) return true;
    return false;
  }

  /** Invariants that hold between any two steps. */
  private checkBetweenSteps(): void {
    if (this.closed !== undefined) return;
    for (const r of this.all) {
      // A permission request whose cancel reached the engine is answered to the agent at once.
      if (r.method === "session/request_permission" && r.cancelled)
        assert.equal(r.answers, 1, this.where(`cancelled permission ${String(r.id)} left unanswered`));
    }
    const inFlight = this.engine.inFlight;
    assert.equal(inFlight.client, this.current.client.size, this.where("client table size"));
    assert.equal(inFlight.agent, this.current.agent.size, this.where("agent table size"));
  }

  run(): void {
    if (this.s.handshake !== null) {
      this.issue("client", "initialize", undefined, false, 0);
      const init = this.owed.find((r) => r.method === "initialize");
      if (init !== undefined) this.respond(init, "ok");
    }
    for (const action of this.s.actions) {
      this.step++;
      this.totals.steps++;
      this.act(action);
      this.checkBetweenSteps();
    }
    this.step++;
    const finale = this.s.finale;
    if (finale.kind === "close") {
      this.closed = finale.side;
      this.turns.clear();
      const unheard = [...this.current[finale.side].values()];
      this.begin();
      this.engine.close(finale.side, "gone");
      // The gone side's own requests are answered into the void (nothing may reach it).
      for (const r of unheard) r.answers = Math.max(r.answers, 1);
      this.current[finale.side].clear();
      assert.deepEqual(this.engine.inFlight, { client: 0, agent: 0 }, this.where("in flight right after close"));
      // The survivor's answers to the gone side are late: nothing is delivered.
      for (const r of [...this.owed]) if (r.issuer === finale.side) this.respond(r, "ok");
    } else {
      // Issuers give up on what silent handlers hold; every other handler answers.
      for (const r of [...this.owed])
        if (r.silent && r.answers === 0) {
          r.cancelAsked = true;
          this.begin();
          this.engine.receive(r.issuer, { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: r.id } });
        }
      for (let guard = 0; this.owed.some((r) => !r.silent); guard++) {
        assert.ok(guard < 1000, "drain does not terminate");
        for (const r of this.owed.filter((o) => !o.silent)) this.respond(r, "ok");
      }
      if (!this.all.some((r) => r.silent && r.delivered)) {
        // Every handler answered: nothing is left to wait for, so no timer may be left either.
        assert.deepEqual(this.engine.inFlight, { client: 0, agent: 0 }, "in flight after every handler answered");
        assert.equal(this.clock.countTimers(), 0, "timers left after every handler answered");
      }
    }
    this.begin();
    this.clock.runAll();
    // Quiescence: every request answered exactly once, both tables empty, no timer left.
    for (const r of this.all)
      assert.equal(r.answers, 1, this.where(`${r.issuer} #${String(r.id)} ${r.method} answered ${r.answers} times`));
    assert.deepEqual(this.engine.inFlight, { client: 0, agent: 0 }, "in flight at quiescence");
    assert.equal(this.clock.countTimers(), 0, "timers left at quiescence");
    assert.equal(this.engine.stats.lateRepliesDropped, this.lateReplies, "late replies counted");
    this.totals.answeredForPeer += this.engine.stats.answeredForPeer;
    this.totals.lateRepliesDropped += this.engine.stats.lateRepliesDropped;
    this.totals.schedules++;
  }
}

// ---- the properties ---------------------------------------------------------------------------

function newTotals(): Totals {
  return { schedules: 0, steps: 0, requests: 0, cancels: 0, answeredForPeer: 0, lateRepliesDropped: 0, duplicates: 0 };
}

function describeTotals(what: string, t: Totals): string {
  return (
    `${what}: ${t.schedules} schedules, ${t.steps} steps, ${t.requests} requests, ${t.cancels} cancels, ` +
    `${t.answeredForPeer} answered by the engine, ${t.lateRepliesDropped} late replies dropped, ` +
    `${t.duplicates} duplicate ids/answers; violations: 0`
  );
}

describe("reliability: engine under random schedules", function () {
  this.timeout(0);
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  before(() => process.on("unhandledRejection", onUnhandled));
  after(() => process.off("unhandledRejection", onUnhandled));

  it(`every request answered exactly once on each side, cancels justified and never across direction, answers to cancelled jobs normalised, quiescent at the end (${scaled(1000, 100_000)} schedules)`, async () => {
    const totals = newTotals();
    fc.assert(
      fc.property(scenarioArbitrary(false), (scenario) => runSchedule(scenario, totals)),
      checkParameters(scaled(1000, 100_000)),
    );
    // Let any rejection the engine might have left surface before judging.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], "unhandled rejections");
    figure(describeTotals("engine schedules", totals));
  });

  it(`malformed answers to cancelled jobs are normalised too (${scaled(500, 20_000)} schedules with garbled answers)`, async () => {
    const totals = newTotals();
    fc.assert(
      fc.property(scenarioArbitrary(true), (scenario) => runSchedule(scenario, totals)),
      checkParameters(scaled(500, 20_000)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], "unhandled rejections");
    figure(describeTotals("engine schedules with malformed answers", totals));
  });
});
