/** What the A2A replica tests do to a replica's tasks: start one, cancel it, read what its work did. */
import assert from "node:assert/strict";
import type { Message, Task } from "@a2a-js/sdk";
import { type Client, ClientFactory } from "@a2a-js/sdk/client";
import { textTaskRequest } from "../../examples/cross-protocol/a2a-request.js";
import type { ReplicaProcess } from "./replica-processes.js";

export interface WorkRecord {
  steps: number;
  aborted: boolean;
  returned: boolean;
}

export async function workOf(replica: ReplicaProcess, taskId: string): Promise<WorkRecord | undefined> {
  const answer = (await (await fetch(`${replica.baseUrl}/work`)).json()) as { work: Record<string, WorkRecord> };
  return answer.work[taskId];
}

export async function startTask(client: Client, steps: number | "ask"): Promise<Task> {
  const result = await client.sendMessage(textTaskRequest(steps === "ask" ? "ask" : `run ${steps}`));
  if (!("status" in result)) throw new Error("the server answered a message, not a task");
  return result;
}

export const clientOf = (replica: ReplicaProcess) => new ClientFactory().createFromUrl(replica.baseUrl);

export const cancel = (client: Client, id: string) => client.cancelTask({ tenant: "", id, metadata: {} });

/** The error a cancel was answered with (the test fails if it was answered with a task). */
export async function cancelError(client: Client, id: string): Promise<Error> {
  try {
    const task = await cancel(client, id);
    throw new assert.AssertionError({ message: `expected an error, got a task in state ${task.status?.state}` });
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    return error as Error;
  }
}

/** The text of a message's first part ("" when it has none). */
export function textOf(message: Message): string {
  const first = message.parts[0]?.content;
  return first?.$case === "text" ? first.value : "";
}
