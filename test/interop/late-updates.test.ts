/**
 * Late updates of a cancelled turn, embedded, with a real agent (issue 26, item 3). An
 * @agentclientprotocol/sdk 2.4.0 client with `withCancellation` cancels its prompt with
 * `$/cancel_request` only; gemini-cli 0.61.0 and qwen-code 0.24.4 both ignore that and go
 * on streaming the scripted model's held text. The engine answers the prompt `cancelled` after the grace; with
 * `turnEnd` (a client's default) the app then sees no update of that turn, its next prompt waits
 * for the agent's real end; with `turnEnd: false` the late updates reach the app. Findings:
 * docs/interop.md ("Real work").
 */
import assert from "node:assert/strict";
import type { EngineEvent, WithCancellationOptions } from "../../src/index.js";
import { closeCell, type EmbeddedDriver, embeddedDriver } from "./drivers.js";
import { until } from "./harness.js";
import type { ModelServer } from "../../src/check/index.js";
import { PEERS_INSTALLED, PEERS_NOTE, REAL_AGENTS, type RealAgent, RUN_SLOW, SLOW_NOTE } from "./peers.js";
import { handshakeOf, prepareCell } from "./real-cells.js";

interface Cell {
  driver: EmbeddedDriver;
  model: ModelServer;
  marker: string;
  home: string;
  sessionId: string;
  events: EngineEvent[];
}

/**
 * The client is told its agent stops a turn on `$/cancel_request` (`peer: { inProcess: true }`,
 * as for an SDK 2.x agent), so the engine sends it that alone and no `session/cancel`: a client
 * that trusts its agent with `$/cancel_request`, and an agent that does not honour it.
 */
async function openCell(peer: RealAgent, options: WithCancellationOptions): Promise<Cell> {
  const { model, home, marker, recipe, command, env } = await prepareCell(peer, { script: { kind: "hold" } });
  const events: EngineEvent[] = [];
  const driver = embeddedDriver(command, env, home, {
    graceMs: 300,
    peer: { inProcess: true },
    onEvent: (event) => events.push(event),
    ...options,
  });
  const sessionId = await driver.open(handshakeOf(recipe), home);
  return { driver, model, marker, home, sessionId, events };
}

const updatesSeen = (cell: Cell) => cell.driver.seen.filter((s) => s.kind === "update").length;

/** Starts a held turn, waits for its text, cancels the prompt by its signal; returns the updates seen at the answer. */
async function cancelAStreamingTurn(cell: Cell): Promise<number> {
  const stop = new AbortController();
  const turn = cell.driver.agent.request(
    "session/prompt",
    { sessionId: cell.sessionId, prompt: [{ type: "text", text: "keep talking" }] },
    { cancellationSignal: stop.signal },
  );
  await until(
    () => (cell.model.streaming.length > 0 && JSON.stringify(cell.driver.seen).includes("agent_message_chunk") ? true : undefined),
    "the model's text reaching the app",
  );
  stop.abort();
  const answer = await turn;
  const shown = updatesSeen(cell);
  assert.deepEqual(answer, { stopReason: "cancelled" });
  assert.ok(
    cell.events.some((e) => e.type === "answered-for-peer"),
    `the engine answered for the agent after the grace (the agent ignored $/cancel_request): ${JSON.stringify(cell.events)}`,
  );
  assert.ok(!cell.events.some((e) => e.type === "emulated"), "no session/cancel was sent for the prompt");
  return shown;
}

const cellIt = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);

for (const peer of REAL_AGENTS.filter((a) => a.recipe === "gemini-cli" || a.recipe === "qwen-code")) {
  describe(`interop, late updates embedded: ${peer.label} ignores $/cancel_request, a withCancellation client`, function () {
    this.timeout(180_000);

    cellIt("turnEnd on (the default): no update of the cancelled turn after its answer; the next prompt waits for the turn's real end", async () => {
      const cell = await openCell(peer, {});
      try {
        const shown = await cancelAStreamingTurn(cell);
        const engine = cell.driver.app.cancellations[0]?.engine;
        assert.ok(engine !== undefined);
        // the agent goes on: its model request stays open and its updates keep coming, to the engine only.
        await until(() => (engine.aftermathStats.lateUpdatesSuppressed >= 3 ? true : undefined), "3 late updates from the agent");
        assert.equal(cell.model.streaming.length, 1, "the agent's upstream request still open");
        assert.equal(updatesSeen(cell), shown, "no late update reached the app");
        // The next prompt is held: the agent is still in the old turn.
        const next = cell.driver.agent.request("session/prompt", { sessionId: cell.sessionId, prompt: [{ type: "text", text: "next" }] });
        await until(() => (engine.aftermathStats.promptsHeld === 1 ? true : undefined), "the next prompt held");
        assert.equal(cell.model.turns.length, 1, "the held prompt did not reach the agent");
        // Stop again, by session/cancel this time (which both agents honour): the held prompt is answered
        // cancelled, the agent ends the old turn, and its late answer ends the engine's tracking.
        let shownAtTurnEnd: number | undefined;
        const seenAtEvent = () => {
          const ended = cell.events.some((e) => e.type === "turn-ended");
          if (ended && shownAtTurnEnd === undefined) shownAtTurnEnd = updatesSeen(cell);
          return ended ? true : undefined;
        };
        cell.driver.cancel(cell.sessionId);
        assert.deepEqual(await next, { stopReason: "cancelled" });
        await until(seenAtEvent, "the agent's real end of the old turn");
        await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the agent's upstream request closed");
        process.stdout.write(
          `      (${engine.aftermathStats.lateUpdatesSuppressed} late updates kept from the app; ` +
          `${String((shownAtTurnEnd ?? 0) - shown)} shown between the answer and the turn's real end)\n`,
        );
        assert.equal(shownAtTurnEnd, shown, "no update between the cancelled answer and the turn's real end");
        cell.model.script = { kind: "finish", text: "third turn" };
        const third = await cell.driver.agent.request("session/prompt", { sessionId: cell.sessionId, prompt: [{ type: "text", text: "again" }] });
        assert.equal(third.stopReason, "end_turn");
        assert.ok(JSON.stringify(cell.driver.seen).includes("third turn"), "the next turn's text");
        assert.deepEqual(cell.driver.problems(), []);
        assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
      } finally {
        await closeCell(cell);
      }
    });

    cellIt("turnEnd: false: the same scenario shows the app late updates of the cancelled turn", async () => {
      const cell = await openCell(peer, { turnEnd: false });
      try {
        const shown = await cancelAStreamingTurn(cell);
        await until(() => (updatesSeen(cell) > shown ? true : undefined), "a late update reaching the app");
        assert.equal(cell.driver.app.cancellations[0]?.engine.aftermathStats.turnsTracked, 0);
        assert.equal(cell.model.streaming.length, 1, "the agent's upstream request still open");
        process.stdout.write(`      (${updatesSeen(cell) - shown} late update(s) reached the app)\n`);
      } finally {
        await closeCell(cell);
      }
    });
  });
}
