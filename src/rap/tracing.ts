import type { JobInfo } from "../core/index.js";

/** What a tool call's job is, for tracing (acp-cancel/otel). */
export function rapCallInfo(threadId: string, toolCallId: string, kind: JobInfo["kind"], carrier?: Readonly<Record<string, unknown>>): JobInfo {
  return { protocol: "rap", method: "tool_call", id: toolCallId, kind, carrier, attributes: { "rap.thread.id": threadId } };
}
