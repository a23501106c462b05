/** Real @a2a-js/sdk clients for the tests: v1.0 from the agent card, v0.3 over the compat transport. */
import type { Task } from "@a2a-js/sdk";
import { type CallInterceptor, Client, ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { textTaskRequest } from "../../examples/cross-protocol/a2a-request.js";
import type { AosAgent } from "../../src/a2a/aos.js";
import type { A2aServer } from "./a2a-server.js";

export type Version = "1.0" | "0.3";
export const VERSIONS: readonly Version[] = ["1.0", "0.3"];

export async function sdkClient(server: A2aServer, version: Version, interceptors: CallInterceptor[] = []): Promise<Client> {
  if (version === "0.3") {
    return new Client(new LegacyJsonRpcTransport({ endpoint: server.url }), server.card, { interceptors });
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { clientConfig: { interceptors } }),
  );
  return factory.createFromUrl(server.baseUrl);
}

/** Starts a task of `steps` work steps and returns it as soon as the server created it. */
export async function startTask(client: Client, steps: number, mode: "run" | "stubborn" | "leave" = "run"): Promise<Task> {
  const result = await client.sendMessage(textTaskRequest(`${mode} ${steps}`));
  if (!("status" in result)) throw new Error("the server answered a message, not a task");
  return result;
}

/** Waits (polling the server through the client) until the task is in a final state. */
export async function untilFinal(client: Client, taskId: string): Promise<Task> {
  for (;;) {
    const task = await client.getTask({ tenant: "", id: taskId });
    const state = task.status?.state;
    if (state === 3 || state === 4 || state === 5 || state === 7) return task;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function cancelOf(client: Client, taskId: string, options?: Parameters<Client["cancelTask"]>[1]) {
  return client.cancelTask({ tenant: "", id: taskId, metadata: {} }, options);
}

/** The observed client agent's own card: the client hook sends it in full as `from`. */
export const CLIENT_CARD: AosAgent = {
  name: "Content generator",
  url: "https://cooking-assistant.example/api/v1",
  instructions: "You are a helpful assistant that can answer questions and help with tasks.",
  version: "1.0.0",
  provider: { name: "Example", url: "https://example.com" },
};

interface RawAnswer {
  result?: unknown;
  error: { code: number; message: string; data?: unknown };
}

/** A cancel as raw JSON-RPC over HTTP, the way any A2A client would send it. */
export async function rawCancel(url: string, version: Version, taskId: unknown, params?: unknown): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "A2A-Version": version },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: version === "1.0" ? "CancelTask" : "tasks/cancel",
      params: params ?? { id: taskId, metadata: {} },
    }),
  });
  return (await response.json()) as RawAnswer;
}
