import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";

const { methods } = acp;
type Answer = { stopReason?: unknown };

/**
 * `--prompt-stops-turn` against a real legacy agent (SDK 0.28.1, which runs a second prompt of a session beside the
 * first): an editor that sends a replacement message alone (goose #11651) gets the Stop it meant only with the flag.
 */
async function replaceMidTurn(bridgeArgs: string[]) {
  const bridge = spawnBridge(bridgeArgs, "legacy-agent", ["--work-ms", "3000"]);
  const stream = acp.ndJsonStream(bridge.output, bridge.input);
  try {
    return await acp.client({ name: "goose-like editor" }).connectWith(stream, async (agent) => {
      const sessionId = await openSession(agent);
      const first = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "work"));
      await eventually(() => (bridge.hop("bridge->agent").some((m) => m.method === "session/prompt") ? true : undefined), "the prompt at the agent");
      const second = (await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "do this instead"))) as Answer;
      const firstAnswer = (await first) as Answer;
      const toAgent = bridge.hop("bridge->agent").filter((m) => m.method === "session/prompt" || m.method === "session/cancel");
      return { first: firstAnswer.stopReason, second: second.stopReason, toAgent: toAgent.map((m) => m.method) };
    });
  } finally {
    await closeBridge(bridge);
  }
}

describe("bridge --prompt-stops-turn, with a real legacy agent", function () {
  this.timeout(30_000);

  it("a prompt sent alone into a running turn reaches the agent after a session/cancel; the old turn ends cancelled at once", async () => {
    const seen = await replaceMidTurn(["--prompt-stops-turn"]);
    assert.deepEqual(seen.toAgent, ["session/prompt", "session/cancel", "session/prompt"]);
    // The agent answers `cancelled` only when it was stopped; left alone, its 3 s of work end `end_turn`.
    assert.equal(seen.first, "cancelled");
    assert.equal(seen.second, "end_turn");
  });

  it("without the flag the prompt passes alone and the old turn runs to its end", async () => {
    const seen = await replaceMidTurn([]);
    assert.deepEqual(seen.toAgent, ["session/prompt", "session/prompt"]);
    assert.equal(seen.first, "end_turn");
    assert.equal(seen.second, "end_turn");
  });
});
