import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import type { MessageStream } from "../../src/index.js";
import { endAndAwaitExit, type SpawnedPeer, tap, type WireRecord } from "./spawn-peer.js";
import { answersArrived, HANG_LIMIT_MS } from "./wire-assertions.js";

/** A real SDK 2.4.0 client from the ACP v2 draft entrypoint. */
export type V2ClientApp = acp.ClientApp;
export type V2AgentContext = acp.ClientContext;

export interface V2Harness {
  log: WireRecord[];
  /**
   * Runs `body` connected to the peer, waits (bounded) for every request on the wire to have its
   * answer there, then closes its stdin and waits for it to exit.
   */
  run<T>(body: (agent: V2AgentContext) => Promise<T>): Promise<T>;
}

/** A v2 client in this process, connected over real stdio to `peer` (an agent, or a bridge), with a tap on the wire. */
export function v2Harness(client: V2ClientApp, peer: SpawnedPeer): V2Harness {
  const log: WireRecord[] = [];
  const stream = tap(acp.ndJsonStream(peer.output, peer.input) as acp.Stream & MessageStream, log);
  return {
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

/** v2 initialize + session/new; returns the session id. */
export async function openV2Session(agent: V2AgentContext): Promise<string> {
  await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "test-editor", version: "1.0.0" },
    capabilities: {},
  });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/" });
  return sessionId;
}

export function v2Prompt(sessionId: string, text: string) {
  return { sessionId, prompt: [{ type: "text" as const, text }] };
}
