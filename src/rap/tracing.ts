import { type AnyJob, type JobInfo, jobObserver } from "../core/index.js";

/** What a tool call's job is, for tracing (acp-cancel/otel). */
export function rapCallInfo(threadId: string, toolCallId: string, kind: JobInfo["kind"], carrier?: Readonly<Record<string, unknown>>): JobInfo {
  return { protocol: "rap", method: "tool_call", id: toolCallId, kind, carrier, attributes: { "rap.thread.id": threadId } };
}

/** The job's `traceparent` (and `tracestate`, `baggage`) as HTTP headers; undefined while not tracing. */
export function traceHeaders(job: AnyJob): Record<string, string> | undefined {
  if (jobObserver === undefined) return undefined;
  const headers: Record<string, unknown> = {};
  jobObserver.inject(job, headers);
  return headers as Record<string, string>;
}
