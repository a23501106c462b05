import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { runBridge } from "../../src/bridge/bridge.js";
import { Logger } from "../../src/bridge/logger.js";
import { type EndedCancelledTurn, TurnProcesses } from "../../src/bridge/turn-processes.js";
import type { JsonRpcResponse } from "../../src/wire/index.js";
import { collectLines, fixturePath } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

describe("the bridge session's seam: a cancelled turn's real end", () => {
  it("cancelledTurnEnded fires once, when the agent ends the cancelled prompt, never for a prompt that was not cancelled", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const received = collectLines(output);
    const ended: EndedCancelledTurn[] = [];
    const status = runBridge(
      {
        command: process.execPath,
        args: [fixturePath("sdk-agent")],
        exitGraceMs: 200,
        killGraceMs: 200,
        editorInput: input,
        editorOutput: output,
      },
      { cancelledTurnEnded: (turn) => ended.push(turn) },
    );
    const send = (message: object) => input.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    const answer = (id: number) =>
      eventually(() => received.find((m) => m.id === id && !("method" in m)), `answer #${id}`);
    send({ id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await answer(1);
    send({ id: 2, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } });
    const { sessionId } = (await answer(2)).result as { sessionId: string };
    send({ id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "plain" }] } });
    await answer(3);
    send({ id: 4, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "throw-on-abort" }] } });
    send({ method: "$/cancel_request", params: { requestId: 4 } });
    assert.deepEqual((await answer(4)).result, { stopReason: "cancelled" });
    await eventually(() => (ended.length > 0 ? true : undefined), "the seam heard of the turn's end");
    input.end();
    assert.equal(await status, 0);
    assert.equal(ended.length, 1);
    assert.equal(ended[0]?.promptId, 4);
    assert.equal(typeof ended[0]?.agentPid, "number");
    assert.ok((ended[0]?.turnAgeMs ?? -1) >= 0);
  });
});

describe("cancelledTurnEnded's rules (TurnProcesses in process)", () => {
  const prompt = (id: number, cancelled = true) =>
    ({ payload: { id, issuer: "client" as const, sessionId: "s" }, reason: cancelled ? ("external" as const) : undefined });
  const answer = (id: number): JsonRpcResponse => ({ jsonrpc: "2.0", id, result: { stopReason: "cancelled" } });

  for (const stopsCancelledTurns of [true, false]) {
    it(`fires on the agent's own answer, a late reply or turn-ended, once, never after closed()${stopsCancelledTurns ? "" : " (--keep-turn-processes)"}`, () => {
      const ended: unknown[] = [];
      // No agent pid: nothing is ever stopped here.
      const turns = new TurnProcesses(() => undefined, 100, new Logger("error"), undefined, stopsCancelledTurns, (turn) =>
        ended.push(turn.promptId));
      turns.promptSent(prompt(1));
      turns.answered(prompt(1), answer(1), true); // answered for the agent: its turn goes on
      turns.event({ type: "turn-outlives-answer", sessionId: "s", id: 1, windowMs: 1000 });
      assert.deepEqual(ended, []);
      turns.expectedReply(1); // the agent's late reply
      turns.promptSent(prompt(2));
      turns.answered(prompt(2), answer(2), true);
      turns.event({ type: "turn-ended", sessionId: "s", id: 2, how: "the idle state_update", afterMs: 5, suppressedUpdates: 0 });
      turns.promptSent(prompt(3));
      turns.answered(prompt(3), answer(3), false); // the agent's own answer
      turns.promptSent(prompt(4, false));
      turns.answered(prompt(4, false), answer(4), false); // not cancelled
      turns.promptSent(prompt(5));
      turns.answered(prompt(5), answer(5), true);
      turns.closed(); // the agent is gone: its turns ended with it
      turns.expectedReply(5);
      turns.expectedReply(1);
      turns.event({ type: "turn-ended", sessionId: "s", id: 1, how: "the agent's late answer to the prompt", afterMs: 5, suppressedUpdates: 0 });
      assert.deepEqual(ended, [1, 2, 3]);
    });
  }

  it("a hook that throws is logged and costs nothing else: the turn still ends, and the next one is told", async () => {
    const dir = await mkdtemp(join(tmpdir(), "acp-cancel-hook-throws-"));
    try {
      const logFile = join(dir, "bridge.log");
      const ended: unknown[] = [];
      const turns = new TurnProcesses(() => undefined, 100, new Logger("error", logFile), undefined, true, (turn) => {
        ended.push(turn.promptId);
        throw new Error("the embedder's bug");
      });
      turns.promptSent(prompt(1));
      assert.doesNotThrow(() => turns.answered(prompt(1), answer(1), false));
      turns.promptSent(prompt(2));
      turns.answered(prompt(2), answer(2), true);
      assert.doesNotThrow(() => turns.expectedReply(2));
      assert.deepEqual(ended, [1, 2]);
      const failures = () => readFileSync(logFile, "utf8").match(/the cancelledTurnEnded hook threw: the embedder's bug/g)?.length;
      await eventually(() => (failures() === 2 ? true : undefined), "both failures in the log");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
