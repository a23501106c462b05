import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { type AgentContext, harness, openSession, textPrompt } from "../support/client-harness.js";
import { assertEachAnsweredOnce, eventually, notificationsIn, requestsIn } from "../support/wire-assertions.js";

const { methods } = acp;

interface AgentState {
  engine: { client: number; agent: number };
  mcp: number;
  times: { mcpSettled: number[]; promptAnswered: number[] };
}
const stateOf = (agent: AgentContext) => agent.request<AgentState>("_test/in_flight", {});

describe("ACP turn → MCP tool: jobOf(ctx) hands the turn to the MCP binding (real ACP agent and MCP server, each a process)", () => {
  it("one session/cancel: the MCP tool's handler aborts, then the prompt is answered cancelled exactly once, after the MCP call settled", async () => {
    const h = harness(acp.client({ name: "editor" }), [], "mcp-acp-agent");
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "wait"));
      await eventually(() => (/mcp wait started/.test(h.peer.stderr()) ? true : undefined), "the MCP tool running");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      await eventually(() => (/mcp wait aborted external/.test(h.peer.stderr()) ? true : undefined), "the tool's signal aborted");
      const state = await stateOf(agent);
      assert.deepEqual(state.engine, { client: 0, agent: 0 });
      assert.equal(state.mcp, 0);
      const [settled] = state.times.mcpSettled;
      const [answered] = state.times.promptAnswered;
      assert.ok(settled !== undefined && answered !== undefined);
      assert.ok(settled <= answered, `the MCP call settled (${settled}) before the prompt was answered (${answered})`);
    });
    assertEachAnsweredOnce(h.log);
    assert.equal(requestsIn(h.log, "out", "session/prompt").length, 1);
    assert.equal(notificationsIn(h.log, "out", "session/cancel").length, 1);
  });

  it("an MCP tool that ignores its cancel does not hold the turn: MCP's sender stops waiting when it sends the cancel", async () => {
    const h = harness(acp.client({ name: "editor" }), [], "mcp-acp-agent");
    await h.run(async (agent) => {
      const sessionId = await openSession(agent);
      const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "stubborn"));
      await eventually(() => (/mcp stubborn started/.test(h.peer.stderr()) ? true : undefined), "the MCP tool running");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      assert.deepEqual(await prompt, { stopReason: "cancelled" });
      assert.doesNotMatch(h.peer.stderr(), /stubborn finished/, "answered while the stubborn tool still runs (5 s)");
      const state = await stateOf(agent);
      assert.deepEqual(state.engine, { client: 0, agent: 0 });
      assert.equal(state.mcp, 0);
    });
    assertEachAnsweredOnce(h.log);
  });
});
