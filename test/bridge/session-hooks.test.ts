import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { runBridge } from "../../src/bridge/bridge.js";
import type { EndedCancelledTurn } from "../../src/bridge/cancelled-turns.js";
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
