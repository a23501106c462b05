/**
 * The A2A SendMessage request this demo's agents send: one user text part, answered with the
 * task as soon as the server has created it (`returnImmediately`), so the caller can link it.
 * `metadata` (the sender's W3C trace context, while tracing) lets the remote task join the trace.
 */
import { randomUUID } from "node:crypto";
import { Role, type SendMessageRequest } from "@a2a-js/sdk";

export function textTaskRequest(text: string, metadata?: Record<string, string>): SendMessageRequest {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      metadata,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  };
}
