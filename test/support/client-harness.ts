import * as acp from "@agentclientprotocol/sdk";
import type { MessageStream } from "../../src/index.js";
import { endAndAwaitExit, type SpawnedPeer, spawnFixture, tap, type WireRecord } from "./spawn-peer.js";
import { answersArrived, HANG_LIMIT_MS } from "./wire-assertions.js";

export type ClientApp = ReturnType<typeof acp.client>;
export type AgentContext = Parameters<Parameters<ClientApp["connectWith"]>[1]>[0];

export interface Harness {
  peer: SpawnedPeer;
  log: WireRecord[];
  /**
   * Runs `body` connected to the fixture agent, waits (bounded) for every request on the wire to
   * have its answer there, then closes its stdin and waits for it to exit.
   */
  run<T>(body: (agent: AgentContext) => Promise<T>): Promise<T>;
}

/** A real SDK client in this process, a real SDK agent fixture in a subprocess, and a tap on the wire. */
export function harness(client: ClientApp, agentArgs: string[] = [], fixture = "sdk-agent"): Harness {
  const peer = spawnFixture(fixture, agentArgs);
  const log: WireRecord[] = [];
  const stream = tap(acp.ndJsonStream(peer.output, peer.input) as acp.Stream & MessageStream, log);
  return {
    peer,
    log,
    async run(body) {
      try {
        return await client.connectWith(stream, async (agent) => {
          const result = await body(agent);
          await answersArrived(log);
          return result;
        });
      } finally {
        await endAndAwaitExit(peer, HANG_LIMIT_MS);
      }
    },
  };
}

/** initialize + session/new; returns the session id. */
export async function openSession(agent: AgentContext): Promise<string> {
  await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
  });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
  return sessionId;
}

export function textPrompt(sessionId: string, text: string) {
  return { sessionId, prompt: [{ type: "text" as const, text }] };
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Asks a fixture agent how many requests its engine still holds (excluding this one). */
/** A client that answers a cancelled permission dialog `cancelled` and a cancelled file read with its reason. */
export function cooperativeClient(name = "test-client"): ClientApp {
  return acp
    .client({ name })
    .onRequest(acp.methods.client.session.requestPermission, async ({ signal }) => {
      await aborted(signal);
      return { outcome: { outcome: "cancelled" } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ signal }) => {
      await aborted(signal);
      throw signal.reason;
    });
}

export async function agentInFlight(agent: AgentContext): Promise<{ client: number; agent: number }> {
  const { client, agent: fromAgent } = await agent.request<{ client: number; agent: number }>(
    "_test/in_flight",
    {},
  );
  return { client, agent: fromAgent };
}
