import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { ndJsonStream, withCancellation } from "../../src/index.js";
import type { Child } from "../lib/child.js";
import { type TapHooks, tapStream } from "./tap.js";

type ClientConnection = ReturnType<ReturnType<typeof acp.client>["connect"]>;
export type AgentContext = ClientConnection["agent"];

export interface SdkClientOptions {
  /** `withCancellation(acp.client(...))` instead of the bare SDK client. */
  wrapped?: boolean;
  /** With `wrapped`: connect through acp-cancel's `ndJsonStream` (engine inline). */
  inline?: boolean;
  tap?: TapHooks;
  /** Called when the agent's `bench/nested` request reaches the client's handler. */
  onNested?(): void;
}

export interface SdkClient {
  agent: AgentContext;
  close(): Promise<void>;
}

/**
 * A real SDK 2.4.0 client in the bench process, connected over the child's stdio, after
 * `initialize`. Its `bench/nested` handler never answers on its own but honours its signal.
 */
export async function connectSdkClient(child: Child, options: SdkClientOptions = {}): Promise<SdkClient> {
  const base = acp.client({ name: "bench-client" });
  const app = options.wrapped ? withCancellation(base) : base;
  app.onRequest("*", ({ method, signal }) => {
    if (method !== "bench/nested") throw acp.RequestError.methodNotFound(method);
    options.onNested?.();
    return new Promise((_, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  });
  const wire = (options.inline ? ndJsonStream : acp.ndJsonStream)(
    Writable.toWeb(child.proc.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.proc.stdout) as unknown as ReadableStream<Uint8Array>,
  );
  const stream = options.tap === undefined ? wire : { ...wire, ...tapStream(wire, options.tap) };
  const connection = app.connect(stream as acp.Stream);
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
  });
  return {
    agent: connection.agent,
    async close() {
      connection.close();
      await child.stop();
    },
  };
}
