import { type AnyJob, type JobInfo, jobObserver } from "../core/index.js";

/**
 * RAP's part of tracing (acp-cancel/otel): what a tool call's job is, and the W3C trace
 * context its invocation and cancel notices carry as HTTP headers. All of it only while a
 * job observer is installed.
 */

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
