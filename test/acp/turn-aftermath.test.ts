import assert from "node:assert/strict";
import sinon from "sinon";
import { CancelEngine, type EngineEvent, type EngineOptions, type StuckTurn } from "../../src/index.js";
import { type Side, TURN_STUCK_ERROR_CODE } from "../../src/acp/index.js";
import type { JsonRpcId, JsonRpcMessage } from "../../src/wire/index.js";

interface Delivery {
  to: Side;
  message: JsonRpcMessage;
}

/** The real engine with a recording `deliver` and a fake clock (its own sandbox). */
function withEngine(options: EngineOptions, body: (h: ReturnType<typeof harness>) => void): void {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
  try {
    const h = harness(clock, options);
    body(h);
    assert.deepEqual(h.engine.inFlight, { client: 0, agent: 0 }, "requests left in flight");
    assert.equal(clock.countTimers(), 0, "timers left behind");
  } finally {
    sandbox.restore();
  }
}

function harness(clock: sinon.SinonFakeTimers, options: EngineOptions) {
  const log: Delivery[] = [];
  const events: EngineEvent[] = [];
  const engine = new CancelEngine((to, message) => log.push({ to, message }), {
    now: () => Date.now(),
    ...options,
    onEvent: (event) => events.push(event),
  });
  let cursor = 0;
  const take = () => {
    const fresh = log.slice(cursor);
    cursor = log.length;
    return fresh;
  };
  return {
    engine,
    events,
    client: (message: unknown) => (engine.receive("client", message), take()),
    agent: (message: unknown) => (engine.receive("agent", message), take()),
    tick: (ms: number) => (clock.tick(ms), take()),
    close: (side: Side, detail: string) => (engine.close(side, detail), take()),
    reopen: (side: Side, detail: string) => (engine.reopen(side, detail), take()),
    eventsOf: <T extends EngineEvent["type"]>(type: T) =>
      events.filter((event): event is Extract<EngineEvent, { type: T }> => event.type === type),
  };
}

const prompt = (id: JsonRpcId, sessionId: string, text = "go") => ({
  jsonrpc: "2.0" as const,
  id,
  method: "session/prompt",
  params: { sessionId, prompt: [{ type: "text", text }] },
});
const update = (sessionId: string, text: string) => ({
  jsonrpc: "2.0" as const,
  method: "session/update",
  params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
});
const permission = (id: JsonRpcId, sessionId: string) => ({
  jsonrpc: "2.0" as const,
  id,
  method: "session/request_permission",
  params: {
    sessionId,
    toolCall: { toolCallId: "c", title: "Edit" },
    options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
  },
});
const sessionCancel = (sessionId: string) => ({ jsonrpc: "2.0" as const, method: "session/cancel", params: { sessionId } });
const cancelRequest = (requestId: JsonRpcId) => ({
  jsonrpc: "2.0" as const,
  method: "$/cancel_request",
  params: { requestId },
});
const endTurn = (id: JsonRpcId) => ({ jsonrpc: "2.0" as const, id, result: { stopReason: "end_turn" } });
const cancelledTurn = (id: JsonRpcId) => ({ jsonrpc: "2.0" as const, id, result: { stopReason: "cancelled" } });
const to = (side: Side, message: JsonRpcMessage): Delivery => ({ to: side, message });

/** Prompt 1 in session s, cancelled, grace (100 ms) expired: answered cancelled for the agent. */
function stuckTurn(h: ReturnType<typeof harness>): void {
  h.client(prompt(1, "s"));
  h.client(sessionCancel("s"));
  assert.deepEqual(h.tick(100), [to("client", cancelledTurn(1))]);
}

const TURN_END = { graceMs: 100, turnEnd: { windowMs: 1000 } } as const;

describe("the real end of a turn (turn-aftermath), engine level", () => {
  it("without turnEnd nothing changes: late updates pass, the next prompt goes at once", () =>
    withEngine({ graceMs: 100 }, (h) => {
      stuckTurn(h);
      assert.deepEqual(h.agent(update("s", "late")), [to("client", update("s", "late"))]);
      assert.deepEqual(h.client(prompt(2, "s")), [to("agent", prompt(2, "s"))]);
      assert.deepEqual(h.agent(endTurn(1)), []);
      assert.deepEqual(h.agent(endTurn(2)), [to("client", endTurn(2))]);
      assert.equal(h.engine.aftermathStats.turnsTracked, 0);
    }));

  it("late updates are suppressed and counted; the next prompt waits for the late answer, then goes", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      assert.deepEqual(h.agent(update("s", "late 1")), []);
      assert.deepEqual(h.agent(update("s", "late 2")), []);
      // Another session is not affected.
      assert.deepEqual(h.agent(update("t", "other")), [to("client", update("t", "other"))]);
      assert.deepEqual(h.client(prompt(2, "s")), [], "held behind the old turn");
      assert.deepEqual(h.client(prompt(3, "s")), [], "held too, in order");
      assert.deepEqual(h.agent(update("s", "late 3")), []);
      assert.deepEqual(h.agent(endTurn(1)), [to("agent", prompt(2, "s")), to("agent", prompt(3, "s"))]);
      assert.deepEqual(h.agent(update("s", "new")), [to("client", update("s", "new"))]);
      assert.deepEqual(h.agent(endTurn(2)), [to("client", endTurn(2))]);
      assert.deepEqual(h.agent(endTurn(3)), [to("client", endTurn(3))]);
      assert.deepEqual(h.engine.aftermathStats, {
        turnsTracked: 1,
        lateUpdatesSuppressed: 3,
        lateRequestsRefused: 0,
        promptsHeld: 2,
        stuckEscalations: 0,
      });
      assert.deepEqual(
        h.eventsOf("turn-ended").map(({ afterMs: _, ...e }) => e),
        [
          {
            type: "turn-ended",
            sessionId: "s",
            id: 1,
            how: "the agent's late answer to the prompt",
            suppressedUpdates: 3,
          },
        ],
      );
      assert.equal(h.eventsOf("late-reply-dropped").length, 1, "the late answer itself is still dropped");
    }));

  it("two prompts of one session both answered for the agent: the turn ends when the agent has answered both", () =>
    withEngine(TURN_END, (h) => {
      h.client(prompt(1, "s"));
      h.client(prompt(2, "s")); // a client that does not wait: both reach the agent
      h.client(sessionCancel("s"));
      h.client({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } });
      assert.deepEqual(h.tick(100), [to("client", cancelledTurn(2)), to("client", cancelledTurn(1))]);
      assert.deepEqual(h.client(prompt(3, "s")), []);
      assert.deepEqual(h.agent(endTurn(1)), [], "prompt 2 is still running at the agent");
      assert.deepEqual(h.agent(update("s", "late")), []);
      assert.deepEqual(h.agent(endTurn(2)), [to("agent", prompt(3, "s"))]);
      h.agent(endTurn(3));
    }));

  it("a late error answer ends the turn too", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      h.client(prompt(2, "s"));
      assert.deepEqual(h.agent({ jsonrpc: "2.0", id: 1, error: { code: -32603, message: "crashed" } }), [
        to("agent", prompt(2, "s")),
      ]);
      h.agent(endTurn(2));
    }));

  it("a prompt sent with session/cancel that the agent answers with an error starts no turn: answered cancelled once, nothing emulated or held", () =>
    withEngine(TURN_END, (h) => {
      h.client(prompt(1, "s"));
      h.client(sessionCancel("s"));
      const refused = h.agent({ jsonrpc: "2.0", id: 1, error: { code: -32800, message: "Request cancelled" } });
      assert.deepEqual(refused, [to("client", cancelledTurn(1))]);
      assert.deepEqual(h.tick(1000), [], "nothing made up afterwards");
      assert.deepEqual(h.client(prompt(2, "s")), [to("agent", prompt(2, "s"))], "not held");
      assert.deepEqual(h.agent(endTurn(2)), [to("client", endTurn(2))]);
      for (const type of ["turn-outlives-answer", "prompt-held", "emulated", "answered-for-peer"] as const)
        assert.deepEqual(h.eventsOf(type), [], `no ${type}`);
    }));

  it("a request the agent makes for the answered turn is answered cancelled at once, never shown", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      assert.deepEqual(h.agent(permission(7, "s")), [
        to("agent", { jsonrpc: "2.0", id: 7, result: { outcome: { outcome: "cancelled" } } }),
      ]);
      const read = { jsonrpc: "2.0" as const, id: 8, method: "fs/read_text_file", params: { sessionId: "s", path: "/x" } };
      const [answer] = h.agent(read);
      assert.equal(answer?.to, "agent");
      assert.equal((answer?.message as { error?: { code: number } }).error?.code, -32800);
      assert.equal(h.engine.aftermathStats.lateRequestsRefused, 2);
      h.agent(endTurn(1));
      assert.deepEqual(h.agent(permission(9, "s")), [to("client", permission(9, "s"))], "after the end: shown");
      h.client({ jsonrpc: "2.0", id: 9, result: { outcome: { outcome: "selected", optionId: "allow" } } });
    }));

  it("a held prompt cancelled by its client is answered cancelled and never reaches the agent", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      h.client(prompt(2, "s"));
      assert.deepEqual(h.client(cancelRequest(2)), [to("client", cancelledTurn(2))]);
      h.client(prompt(3, "s"));
      // session/cancel reaches the held prompt too (and is still told to the agent).
      assert.deepEqual(h.client(sessionCancel("s")), [to("agent", sessionCancel("s")), to("client", cancelledTurn(3))]);
      assert.deepEqual(h.agent(endTurn(1)), []);
    }));

  it("fail (the default): when the window passes, held prompts get an error naming the stuck turn; later ones at once", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      h.tick(400);
      assert.deepEqual(h.client(prompt(2, "s")), []);
      const [failed, ...rest] = h.tick(600);
      assert.deepEqual(rest, []);
      assert.equal(failed?.to, "client");
      type StuckError = { id: JsonRpcId; error: { code: number; message: string; data: Record<string, unknown> } };
      const error = failed?.message as StuckError;
      assert.equal(error.id, 2);
      assert.equal(error.error.code, TURN_STUCK_ERROR_CODE);
      assert.match(error.error.message, /Session s is stuck/);
      assert.match(error.error.message, /prompt 1/);
      assert.match(error.error.message, /1000 ms/);
      assert.deepEqual(error.error.data, {
        reason: "turn-stuck",
        sessionId: "s",
        stuckPromptId: 1,
        stuckForMs: 1000,
        turnAgeMs: 1100,
        suppressedUpdates: 0,
      });
      const [again] = h.client(prompt(3, "s"));
      assert.equal((again?.message as { error?: { code: number } }).error?.code, TURN_STUCK_ERROR_CODE);
      assert.deepEqual(h.agent(update("s", "still late")), [], "still suppressed");
      // The turn finally ends: the session works again.
      assert.deepEqual(h.agent(endTurn(1)), []);
      assert.deepEqual(h.client(prompt(4, "s")), [to("agent", prompt(4, "s"))]);
      h.agent(endTurn(4));
    }));

  it("onStuck 'wait' gives another window (each escalation numbered); the end releases the prompt", () => {
    const seen: StuckTurn[] = [];
    withEngine(
      { graceMs: 100, turnEnd: { windowMs: 500, onStuck: (turn) => (seen.push(turn), "wait") } },
      (h) => {
        stuckTurn(h);
        h.agent(update("s", "late"));
        h.client(prompt(2, "s"));
        assert.deepEqual(h.tick(1000), []);
        assert.deepEqual(
          seen.map((t) => [t.escalation, t.stuckForMs, t.turnAgeMs, t.heldPrompts, t.suppressedUpdates]),
          [
            [1, 500, 600, 1, 1],
            [2, 1000, 1100, 1, 1],
          ],
        );
        assert.deepEqual(h.agent(endTurn(1)), [to("agent", prompt(2, "s"))]);
        h.agent(endTurn(2));
        assert.equal(h.eventsOf("turn-stuck").length, 2);
      },
    );
  });

  it("the agent gone: a held prompt gets the error naming why; nothing left", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      h.client(prompt(2, "s"));
      const [answer] = h.close("agent", "agent exited with code 1");
      assert.equal(answer?.to, "client");
      assert.match((answer?.message as { error: { message: string } }).error.message, /agent exited with code 1/);
    }));

  it("reopen (an agent restarted): held prompts answered with the restart's reason; the side works again", () =>
    withEngine(TURN_END, (h) => {
      stuckTurn(h);
      h.client(prompt(2, "s"));
      const [answer, ...rest] = h.reopen("agent", "the agent was restarted");
      assert.deepEqual(rest, []);
      assert.equal(answer?.to, "client");
      assert.equal((answer?.message as { id: JsonRpcId }).id, 2);
      assert.match((answer?.message as { error: { message: string } }).error.message, /the agent was restarted/);
      assert.equal(h.engine.inFlight.client, 0);
      assert.deepEqual(h.client(prompt(3, "s2")), [to("agent", prompt(3, "s2"))]);
      assert.deepEqual(h.agent(endTurn(3)), [to("client", endTurn(3))]);
    }));

  it("an agent that honours the cancel sees exactly what it saw without turnEnd", () => {
    const script = (h: ReturnType<typeof harness>) => [
      ...h.client(prompt(1, "s")),
      ...h.agent(update("s", "working")),
      ...h.client(sessionCancel("s")),
      ...h.agent(update("s", "stopping")),
      ...h.tick(50),
      ...h.agent(endTurn(1)),
      ...h.client(prompt(2, "s")),
      ...h.agent(update("s", "next")),
      ...h.agent(endTurn(2)),
    ];
    let plain: Delivery[] = [];
    let tracked: Delivery[] = [];
    withEngine({ graceMs: 100 }, (h) => {
      plain = script(h);
    });
    withEngine(TURN_END, (h) => {
      tracked = script(h);
      assert.equal(h.engine.aftermathStats.turnsTracked, 0);
    });
    assert.deepEqual(tracked, plain);
    assert.ok(plain.length > 6);
  });
});
