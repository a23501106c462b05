import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { CAPABILITY_KEY } from "../../src/acp/index.js";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { harness, openSession, textPrompt } from "../support/client-harness.js";
import { tap, type WireRecord } from "../support/spawn-peer.js";

const { methods } = acp;
type Message = Record<string, unknown>;

/** A deterministic session with nested requests in both directions and no cancellation. */
function editorApp() {
  return acp
    .client({ name: "editor" })
    .onRequest(methods.client.session.requestPermission, () => ({
      outcome: { outcome: "selected", optionId: "allow" },
    }))
    .onRequest(methods.client.fs.readTextFile, () => ({ content: "héllo ✓ 😀\nsecond line" }))
    .onNotification(methods.client.session.update, () => {});
}

async function session(agent: Parameters<Parameters<ReturnType<typeof acp.client>["connectWith"]>[1]>[0]) {
  const sessionId = await openSession(agent);
  await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "nested"));
  await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "echo"));
  await agent.request("_test/echo", { unicode: "ü\u2028", nested: { list: [1, 2.5, null, true] } });
}

/** Removes the capability the bridge adds at initialize (the one documented difference). */
function withoutOurCapability(message: Message): Message {
  const copy = structuredClone(message);
  for (const holder of [
    (copy.params as Message | undefined)?.clientCapabilities,
    (copy.result as Message | undefined)?.agentCapabilities,
  ]) {
    const meta = (holder as Message | undefined)?._meta as Message | undefined;
    if (meta === undefined) continue;
    delete meta[CAPABILITY_KEY];
    if (Object.keys(meta).length === 0) delete (holder as Message)._meta;
  }
  return copy;
}

const canonical = (messages: Message[]) =>
  messages.map((m) => JSON.stringify(withoutOurCapability(m))).sort();

describe("bridge pass-through fidelity", () => {
  it("relays every message unchanged and in order per direction, and matches a direct session", async () => {
    const direct = harness(editorApp(), ["--bare"]);
    await direct.run(session);

    const bridge = spawnBridge([], "sdk-agent", ["--bare"]);
    const log: WireRecord[] = [];
    try {
      await editorApp().connectWith(
        tap(acp.ndJsonStream(bridge.output, bridge.input) as acp.Stream & { readable: never }, log),
        session,
      );
    } finally {
      await closeBridge(bridge);
    }

    // Hop by hop: what one side sent is exactly what the other received, in the same order.
    assert.deepEqual(bridge.hop("bridge->agent").map(withoutOurCapability), bridge.hop("editor->bridge"));
    assert.deepEqual(bridge.hop("bridge->editor").map(withoutOurCapability), bridge.hop("agent->bridge"));
    // End to end: the editor's view through the bridge equals a direct session's.
    const sides = (records: WireRecord[], direction: "in" | "out") =>
      records.filter((r) => r.direction === direction).map((r) => r.message);
    assert.deepEqual(canonical(sides(log, "out")), canonical(sides(direct.log, "out")));
    assert.deepEqual(canonical(sides(log, "in")), canonical(sides(direct.log, "in")));
    assert.ok(log.length >= 14, `a substantial session (${log.length} messages)`);
  });
});
