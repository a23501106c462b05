import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import type { SpawnedPeer } from "./spawn-peer.js";
import { openV2Session, type V2AgentContext, type V2ClientApp, v2Harness, v2Prompt } from "./v2-harness.js";
import {
  assertEachAnsweredOnce,
  errorCode,
  eventually,
  notificationsIn,
  requestsIn,
  responsesTo,
} from "./wire-assertions.js";

/**
 * The must-show cases for ACP v2, written once and run in each placement: acp-cancel
 * embedded in the agent, in the bridge between a v2 editor and a bare v2 agent, or embedded
 * in the client. Every message on the wire is checked against the v2 schema by the tap.
 */
export interface V2Placement {
  /** Spawns the peer the client talks to, given the agent fixture's extra arguments. */
  spawn(agentArgs: string[]): SpawnedPeer;
  /** Wraps the client app (withCancellation when the engine is embedded in the client). */
  client(app: V2ClientApp): V2ClientApp;
  /** Requests the engine still holds, when the placement can tell (embedded agent). */
  inFlight?(agent: V2AgentContext): Promise<{ client: number; agent: number }>;
}

type Update = acp.SessionUpdate & { state?: string; stopReason?: string };

function updatesOf(app: V2ClientApp, updates: Update[]): V2ClientApp {
  return app.onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update as Update);
  });
}

const isIdle = (u: Update) => u.sessionUpdate === "state_update" && u.state === "idle";

/** The error a request was rejected with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<{ code?: number; data?: { reason?: unknown } }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: number; data?: { reason?: unknown } };
  }
  assert.fail("expected the request to be rejected");
}

/** session/cancel during an inserted turn with an open permission dialog. */
export async function cancelDuringPermission(placement: V2Placement, answersDialog: boolean): Promise<void> {
  const updates: Update[] = [];
  let dialog: AbortSignal | undefined;
  const app = updatesOf(acp.client({ name: "v2-editor" }), updates).onRequest(
    acp.methods.client.session.requestPermission,
    ({ signal }) => {
      dialog = signal;
      // A good client answers a cancelled dialog `cancelled`; a bad one never answers.
      return new Promise((resolve) => {
        if (answersDialog) signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }));
      });
    },
  );
  const h = v2Harness(placement.client(app), placement.spawn([]));
  await h.run(async (agent) => {
    const sessionId = await openV2Session(agent);
    const answer = await agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "permission"));
    assert.deepEqual(answer, { messageId: "message-1" }, "the prompt is answered at insertion with its own messageId");
    const [permission] = await eventually(() => {
      const seen = requestsIn(h.log, "in", "session/request_permission");
      return seen.length ? seen : undefined;
    }, "the permission dialog");
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    await eventually(() => updates.find(isIdle), "the idle state_update");
    // The agent was told `cancelled`, and reports what it was told.
    const chunk = updates.find((u) => u.sessionUpdate === "agent_message_chunk") as
      | { content: { text: string } }
      | undefined;
    assert.deepEqual(JSON.parse(chunk?.content.text ?? "null"), { outcome: { outcome: "cancelled" } });
    assert.equal(updates.find(isIdle)?.stopReason, "cancelled");
    assert.equal(dialog?.aborted, true, "the client's dialog was told to stop ($/cancel_request)");
    if (answersDialog) {
      // The engine is on the agent's side of this wire: the cancel crossed it toward the client.
      assert.deepEqual(
        notificationsIn(h.log, "in", "$/cancel_request").map((m) => m.params),
        [{ requestId: permission?.id }],
      );
    } else {
      // The engine is in this client: it answered the agent for the client's own dialog.
      assert.deepEqual(
        responsesTo(h.log, "out", permission?.id).map((m) => m.result),
        [{ outcome: { outcome: "cancelled" } }],
      );
    }
    const promptId = requestsIn(h.log, "out", "session/prompt")[0]?.id;
    assert.deepEqual(
      responsesTo(h.log, "in", promptId).map((m) => m.result),
      [{ messageId: "message-1" }],
    );
    if (placement.inFlight) assert.deepEqual(await placement.inFlight(agent), { client: 0, agent: 0 });
    return permission;
  });
  assertEachAnsweredOnce(h.log);
}

/** A held prompt withdrawn by $/cancel_request, and one cancelled by session/cancel: -32800 each. */
export async function heldPromptCancelled(placement: V2Placement, agentArgs: string[]): Promise<void> {
  const updates: Update[] = [];
  const h = v2Harness(placement.client(updatesOf(acp.client({ name: "v2-editor" }), updates)), placement.spawn(agentArgs));
  await h.run(async (agent) => {
    const sessionId = await openV2Session(agent);
    const turn = await agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "work"));
    assert.deepEqual(turn, { messageId: "message-1" });
    // Held behind the running turn, then withdrawn with the SDK's own $/cancel_request.
    const stop = new AbortController();
    const withdrawn = rejection(
      agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "later"), { cancellationSignal: stop.signal }),
    );
    await eventually(() => (requestsIn(h.log, "out", "session/prompt").length === 2 ? true : undefined), "held prompt sent");
    stop.abort();
    const first = await withdrawn;
    assert.equal(first.code, -32800);
    // Held again, then cancelled with the session's foreground work.
    const held = rejection(agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "later")));
    await eventually(() => (requestsIn(h.log, "out", "session/prompt").length === 3 ? true : undefined), "held prompt sent");
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const second = await held;
    assert.equal(second.code, -32800);
    for (const prompt of requestsIn(h.log, "out", "session/prompt").slice(1)) {
      // The app's promise can settle before the wire answer is read (an engine in this client
      // answers its app itself): wait for the wire's.
      const [answer] = await eventually(() => {
        const answers = responsesTo(h.log, "in", prompt.id);
        return answers.length > 0 ? answers : undefined;
      }, `the wire answer to prompt #${String(prompt.id)}`);
      assert.equal(errorCode(answer), -32800);
      assert.ok(!("result" in (answer ?? {})), "no v1 stopReason result in v2");
    }
    if (placement.inFlight) assert.deepEqual(await placement.inFlight(agent), { client: 0, agent: 0 });
  });
  assertEachAnsweredOnce(h.log);
}

/** session/close with a turn running and a prompt held. */
export async function closeWithTurnAndHeldPrompt(placement: V2Placement): Promise<void> {
  const updates: Update[] = [];
  const h = v2Harness(placement.client(updatesOf(acp.client({ name: "v2-editor" }), updates)), placement.spawn([]));
  await h.run(async (agent) => {
    const sessionId = await openV2Session(agent);
    const turn = await agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "work"));
    const held = rejection(agent.request(acp.methods.agent.session.prompt, v2Prompt(sessionId, "later")));
    await eventually(() => (requestsIn(h.log, "out", "session/prompt").length === 2 ? true : undefined), "held prompt sent");
    const closed = await agent.request(acp.methods.agent.session.close, { sessionId });
    assert.deepEqual(closed, {});
    assert.equal((await held).code, -32800);
    assert.deepEqual(turn, { messageId: "message-1" });
    // The final idle state_update reached the client before the close was answered.
    const closeId = requestsIn(h.log, "out", "session/close")[0]?.id;
    const closeAt = h.log.findIndex((r) => r.direction === "in" && r.message.id === closeId && !("method" in r.message));
    const idleAt = h.log.findIndex(
      (r) => r.direction === "in" && r.message.method === "session/update" && isIdle((r.message.params as { update: Update }).update),
    );
    assert.ok(idleAt !== -1 && idleAt < closeAt, "idle state_update before the close answer");
    assert.equal(notificationsIn(h.log, "out", "session/cancel").length, 0);
    if (placement.inFlight) assert.deepEqual(await placement.inFlight(agent), { client: 0, agent: 0 });
  });
  assertEachAnsweredOnce(h.log);
}

/** Asks the v2 fixture agent how many requests its engine still holds (excluding this one). */
export function agentInFlightV2(agent: V2AgentContext): Promise<{ client: number; agent: number }> {
  return agent.request<{ client: number; agent: number }>("_test/in_flight", {});
}
