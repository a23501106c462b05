import assert from "node:assert/strict";
import fc from "fast-check";
import sinon from "sinon";
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import type { JsonRpcId, JsonRpcMessage } from "../../src/wire/index.js";

type Message = Record<string, unknown>;
const SESSIONS = ["s1", "s2"] as const;

type Action =
  | { kind: "prompt"; session: number }
  | { kind: "sessionCancel"; session: number }
  | { kind: "cancelRequest"; pick: number }
  | { kind: "update"; session: number }
  | { kind: "agentAnswers"; pick: number }
  | { kind: "agentAsks"; session: number }
  | { kind: "clientAnswers"; pick: number }
  | { kind: "tick"; ms: number };

const actionArbitrary: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("prompt" as const), session: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("sessionCancel" as const), session: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancelRequest" as const), pick: fc.nat(7) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("update" as const), session: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("agentAnswers" as const), pick: fc.nat(7) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("agentAsks" as const), session: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("clientAnswers" as const), pick: fc.nat(7) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.constantFrom(10, 60, 150, 400, 1000) }) },
);

/**
 * Random interleavings of prompts, cancels, late answers, updates and agent requests, against the
 * real engine with `turnEnd` on, checked against what the feature promises.
 */
function runSchedule(actions: Action[], wait: boolean, turnEnd = true): void {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
  try {
    const now: { to: Side; message: Message }[] = [];
    const engine = new CancelEngine((to: Side, message: JsonRpcMessage) => now.push({ to, message: message as Message }), {
      graceMs: 100,
      now: () => Date.now(),
      ...(turnEnd
        ? { turnEnd: { windowMs: 500, onStuck: (turn) => (wait && turn.escalation === 1 ? "wait" : "fail") } }
        : {}),
    });
    const answersToClient = new Map<JsonRpcId, number>();
    const answersToAgent = new Map<JsonRpcId, number>();
    const promptSession = new Map<JsonRpcId, string>();
    /** Prompts the agent received and has not answered. */
    const atAgent: JsonRpcId[] = [];
    /** Agent requests the client received and has not answered. */
    const atClient: JsonRpcId[] = [];
    const clientPending: JsonRpcId[] = [];
    /** Per session: prompts answered to the client that the agent has not answered yet. */
    const stuck = new Map<string, Set<JsonRpcId>>();
    const isStuck = (session: string) => (stuck.get(session)?.size ?? 0) > 0;
    let nextId = 0;
    let nextAgentId = 1000;

    const feed = (from: Side, message: Message) => {
      now.length = 0;
      engine.receive(from, message);
      observe();
    };
    const observe = () => {
      for (const { to, message } of now) {
        const id = message.id as JsonRpcId;
        if (to === "client" && !("method" in message)) {
          answersToClient.set(id, (answersToClient.get(id) ?? 0) + 1);
          assert.equal(answersToClient.get(id), 1, `prompt ${String(id)} answered twice`);
          clientPending.splice(clientPending.indexOf(id), 1);
          const session = promptSession.get(id);
          if (session !== undefined && atAgent.includes(id)) stuck.set(session, (stuck.get(session) ?? new Set()).add(id));
        }
        if (to === "client" && message.method === "session/update") {
          const session = (message.params as { sessionId: string }).sessionId;
          assert.ok(!isStuck(session), `an update of ${session} reached the client while its turn was stuck`);
        }
        if (to === "client" && message.method === "session/request_permission") {
          const session = (message.params as { sessionId: string }).sessionId;
          assert.ok(!isStuck(session), `a request of ${session}'s stuck turn reached the client`);
          atClient.push(id);
        }
        if (to === "agent" && !("method" in message)) {
          answersToAgent.set(id, (answersToAgent.get(id) ?? 0) + 1);
          assert.equal(answersToAgent.get(id), 1, `agent request ${String(id)} answered twice`);
        }
        if (to === "agent" && message.method === "session/prompt") {
          const session = promptSession.get(id) ?? "";
          assert.ok(!isStuck(session), `prompt ${String(id)} reached the agent while ${session}'s turn was stuck`);
          atAgent.push(id);
        }
      }
    };
    const tick = (ms: number) => {
      now.length = 0;
      clock.tick(ms);
      observe();
    };
    const agentAnswers = (id: JsonRpcId) => {
      atAgent.splice(atAgent.indexOf(id), 1);
      const session = promptSession.get(id) ?? "";
      stuck.get(session)?.delete(id);
      feed("agent", { jsonrpc: "2.0", id, result: { stopReason: "end_turn" } });
    };

    for (const action of actions) {
      switch (action.kind) {
        case "prompt": {
          const id = nextId++;
          const sessionId = SESSIONS[action.session] ?? "s1";
          promptSession.set(id, sessionId);
          clientPending.push(id);
          feed("client", { jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [] } });
          break;
        }
        case "sessionCancel":
          feed("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: SESSIONS[action.session] } });
          break;
        case "cancelRequest": {
          const id = clientPending[action.pick % Math.max(1, clientPending.length)];
          if (id !== undefined) feed("client", { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
          break;
        }
        case "update":
          feed("agent", {
            jsonrpc: "2.0",
            method: "session/update",
            params: { sessionId: SESSIONS[action.session], update: { sessionUpdate: "agent_message_chunk" } },
          });
          break;
        case "agentAnswers": {
          const id = atAgent[action.pick % Math.max(1, atAgent.length)];
          if (id !== undefined) agentAnswers(id);
          break;
        }
        case "agentAsks":
          feed("agent", {
            jsonrpc: "2.0",
            id: nextAgentId++,
            method: "session/request_permission",
            params: { sessionId: SESSIONS[action.session], toolCall: { toolCallId: "c" }, options: [] },
          });
          break;
        case "clientAnswers": {
          const id = atClient.splice(action.pick % Math.max(1, atClient.length), 1)[0];
          if (id !== undefined)
            feed("client", { jsonrpc: "2.0", id, result: { outcome: { outcome: "selected", optionId: "a" } } });
          break;
        }
        case "tick":
          tick(action.ms);
      }
    }
    // Quiescence: the agent ends every turn it has, the client answers what it was asked, time passes.
    while (atAgent.length > 0) agentAnswers(atAgent[0] as JsonRpcId);
    while (atClient.length > 0) {
      const id = atClient.shift() as JsonRpcId;
      feed("client", { jsonrpc: "2.0", id, result: { outcome: { outcome: "cancelled" } } });
    }
    tick(10_000);
    while (atAgent.length > 0) agentAnswers(atAgent[0] as JsonRpcId);
    tick(10_000);
    for (const id of promptSession.keys()) assert.equal(answersToClient.get(id), 1, `prompt ${String(id)} answered once`);
    for (let id = 1000; id < nextAgentId; id++) assert.equal(answersToAgent.get(id), 1, `agent request ${id} answered once`);
    assert.deepEqual(engine.inFlight, { client: 0, agent: 0 }, "requests left in flight");
    assert.equal(clock.countTimers(), 0, "timers left behind");
    const stats = engine.aftermathStats;
    covered.turns += stats.turnsTracked;
    covered.suppressed += stats.lateUpdatesSuppressed;
    covered.held += stats.promptsHeld;
    covered.refused += stats.lateRequestsRefused;
    covered.escalations += stats.stuckEscalations;
  } finally {
    sandbox.restore();
  }
}

const covered = { turns: 0, suppressed: 0, held: 0, refused: 0, escalations: 0 };

describe("the real end of a turn, property: random schedules against the real engine", () => {
  for (const wait of [false, true]) {
    it(`every prompt answered once; no update of a stuck turn shown; no prompt reaches a busy agent; quiet at the end (onStuck ${wait ? "wait, then fail" : "fail"})`, () => {
      fc.assert(
        fc.property(fc.array(actionArbitrary, { minLength: 10, maxLength: 60 }), (actions) => runSchedule(actions, wait)),
        { numRuns: 1000 },
      );
      // The schedules reached every part of the feature.
      for (const [what, count] of Object.entries(covered)) assert.ok(count > 0, `no schedule had any ${what}`);
    });
  }

  it("the same checks catch an engine without turnEnd (the property can fail)", () => {
    const schedule: Action[] = [
      { kind: "prompt", session: 0 },
      { kind: "sessionCancel", session: 0 },
      { kind: "tick", ms: 150 },
      { kind: "update", session: 0 },
    ];
    assert.throws(() => runSchedule(schedule, false, false), /reached the client while its turn was stuck/);
  });
});
