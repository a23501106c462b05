import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { type BridgeProcess, spawnBridge } from "../support/bridge-harness.js";
import { openV2Session, v2Harness, v2Prompt } from "../support/v2-harness.js";
import {
  cancelDuringPermission,
  closeWithTurnAndHeldPrompt,
  heldPromptCancelled,
  rejection,
  type V2Placement,
} from "../support/v2-scenarios.js";
import { assertEachAnsweredOnce, eventually } from "../support/wire-assertions.js";

/** A real SDK 2.4.0 v2 editor → `acp-cancel bridge` → a bare real SDK 2.4.0 v2 agent, all over real stdio. */
function throughBridge(bridgeArgs: string[] = []): V2Placement & { last: () => BridgeProcess | undefined } {
  let bridge: BridgeProcess | undefined;
  return {
    spawn: (args) => (bridge = spawnBridge(bridgeArgs, "v2-agent", ["--bare", ...args])),
    client: (app) => app,
    last: () => bridge,
  };
}

describe("bridge between a v2 editor and a v2 agent (SDK 2.4.0 experimental/v2)", () => {
  it("initialize: our capability under capabilities._meta both ways, no v1 field names", async () => {
    const placement = throughBridge();
    await closeWithTurnAndHeldPrompt(placement);
    const bridge = placement.last();
    const init = bridge?.hop("bridge->agent").find((m) => m.method === "initialize");
    const answer = bridge?.hop("bridge->editor").find((m) => m.id === init?.id && "result" in m);
    assert.ok(init && answer);
    const params = init.params as Record<string, { _meta?: Record<string, unknown> }>;
    const result = answer.result as Record<string, { _meta?: Record<string, unknown> }>;
    assert.ok(params.capabilities?._meta?.["acp-cancel/cancellation"]);
    assert.ok(result.capabilities?._meta?.["acp-cancel/cancellation"]);
    assert.ok(!("clientCapabilities" in params) && !("agentCapabilities" in result));
    assert.ok(bridge?.trace().some((e) => e.note?.includes('"protocol-version"') && e.note.includes('"v2"')));
  });

  it("session/cancel during an inserted turn with an open permission dialog: $/cancel_request to the editor, cancelled to the agent, one {messageId}, idle reaches the editor", async () => {
    const placement = throughBridge();
    await cancelDuringPermission(placement, true);
    const toAgent = placement.last()?.hop("bridge->agent") ?? [];
    assert.ok(
      toAgent.some((m) => JSON.stringify(m.result) === JSON.stringify({ outcome: { outcome: "cancelled" } })),
      "the agent got the cancelled outcome from the bridge",
    );
    assert.ok(placement.last()?.hop("bridge->editor").some((m) => m.method === "$/cancel_request"));
  });

  it("a held prompt withdrawn by $/cancel_request and one cancelled by session/cancel: -32800, and no session/cancel invented for the withdrawal", async () => {
    const placement = throughBridge();
    await heldPromptCancelled(placement, []);
    const cancels = placement.last()?.hop("bridge->agent").filter((m) => m.method === "session/cancel") ?? [];
    assert.equal(cancels.length, 1, "only the editor's own session/cancel reached the agent");
  });

  it("the same with an agent that ignores both: -32800 from the bridge after its grace period, with data.reason", async () => {
    const placement = throughBridge(["--grace-ms", "150"]);
    await heldPromptCancelled(placement, ["--ignore-cancel"]);
    const answered = placement.last()?.trace().filter((e) => e.note?.includes('"answered-for-peer"')) ?? [];
    assert.equal(answered.length, 2, "both held prompts were answered by the bridge");
    const errors = placement
      .last()
      ?.hop("bridge->editor")
      .filter((m) => (m.error as { code?: number } | undefined)?.code === -32800)
      .map((m) => (m.error as { data?: { reason?: string } }).data?.reason);
    assert.deepEqual(errors, ["external", "session"]);
  });

  it("a prompt sent with session/cancel, answered -32800 (never inserted): no idle made up, the next prompt goes straight through (issue 33)", async () => {
    const bridgeArgs = ["--grace-ms", "100"];
    const bridge = spawnBridge(bridgeArgs, "v2-agent", ["--bare"]);
    const h = v2Harness(acp.client({ name: "v2-editor" }), bridge);
    await h.run(async (agent) => {
      const sessionId = await openV2Session(agent);
      const refused = rejection(agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "uninserted")));
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      assert.equal((await refused).code, -32800);
      // The user types the next prompt later than the grace: before the fix the bridge had made up an idle by then and held it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(await agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "hello")), { messageId: "message-1" });
      await eventually(() => (bridge.hop("bridge->editor").some((m) => JSON.stringify(m).includes('"stopReason":"end_turn"')) ? true : undefined), "the turn's own idle");
    });
    const toEditor = bridge.hop("bridge->editor").map((m) => JSON.stringify(m));
    assert.ok(!toEditor.some((m) => m.includes('"stopReason":"cancelled"')), "no idle state_update made up for work that never ran");
    const notes = bridge.trace().flatMap((e) => (e.note === undefined ? [] : [e.note]));
    for (const type of ["emulated", "prompt-held", "turn-outlives-answer"])
      assert.ok(!notes.some((note) => note.includes(`"type":"${type}"`)), `no ${type}: ${JSON.stringify(notes)}`);
  });

  it("session/close with a turn running and a prompt held", () => closeWithTurnAndHeldPrompt(throughBridge()));

  it("the v2 agent SIGKILLed with a turn running and a prompt held: the held prompt is answered -32603 naming the signal (reason agent-exited), valid v2", async () => {
    const bridge = spawnBridge([], "v2-agent", ["--bare"]);
    const h = v2Harness(acp.client({ name: "v2-editor" }), bridge);
    await h.run(async (agent) => {
      const sessionId = await openV2Session(agent);
      await agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "work"));
      const held = rejection(agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "later")));
      await eventually(
        () => (bridge.hop("bridge->agent").filter((m) => m.method === "session/prompt").length === 2 ? true : undefined),
        "the held prompt at the agent",
      );
      const pid = await eventually(() => /agent pid (\d+)/.exec(bridge.stderr())?.[1], "the agent's pid");
      process.kill(Number(pid), "SIGKILL");
      const error = await held;
      // A crash, not a cancel: docs/decisions.md, "Bridge: an agent that ends on its own".
      assert.equal(error.code, -32603);
      assert.equal(error.data?.reason, "agent-exited");
      assert.match((error as { message?: string }).message ?? "", /agent was killed by SIGKILL/);
    });
    assertEachAnsweredOnce(h.log);
  });
});
