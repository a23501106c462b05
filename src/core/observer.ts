import type { CancelReason } from "./cancel-reason.js";

// The one seam through which tracing (src/otel) watches every binding's jobs: a process global,
// as OpenTelemetry's tracer provider is.

/** What an observer sees of a job (named here, as job.ts imports this file). */
export interface ObservedJob {
  readonly parent: ObservedJob | undefined;
  readonly cause: CancelReason | undefined;
}

/** What a binding says about a job it starts, for the observer to name and parent it. */
export interface JobInfo {
  /** The protocol: "acp", "mcp", "rap", "a2a", "abp", "jsonrpc". */
  readonly protocol: string;
  readonly method: string;
  readonly id?: string | number | undefined;
  /** `client`: this process sent it and waits for the answer; `server`: this process handles it. */
  readonly kind: "client" | "server";
  /** Where the sender's trace context came with it (ACP/MCP `params._meta`, HTTP headers). */
  readonly carrier?: Readonly<Record<string, unknown>> | undefined;
  readonly attributes?: Readonly<Record<string, string | number | boolean>> | undefined;
}

/** Where a cancel came from: the cascade, a signal, a deadline, the binding's own cancel, or directly. */
export type JobCancelOrigin = "parent" | "signal" | "deadline" | "call" | "self";

/** What happens to a cancelled job after its cancel. */
export type JobEvent = "grace" | "synthetic-answer" | "late-reply-dropped";

/** How a job's answer ended, when its binding knows: an error's code and message. */
export interface JobFailure {
  readonly code: string | number;
  readonly message?: string | undefined;
}

export interface JobObserver {
  /** A binding started `job` (its parent job, if any, was started before it). */
  onStart(job: ObservedJob, info: JobInfo): void;
  /** A cancel reached `job` (parents before children). */
  onCancel(job: ObservedJob, cause: CancelReason, origin: JobCancelOrigin): void;
  onEvent(job: ObservedJob, event: JobEvent): void;
  /** `job` settled; `failure` when its answer was an error. A job settles once. */
  onSettle(job: ObservedJob, failure: JobFailure | undefined): void;
  /** Writes `job`'s context into an outgoing carrier (`_meta`, HTTP headers) as W3C keys. */
  inject(job: ObservedJob, carrier: Record<string, unknown>): void;
}

/** The observer in force; undefined (the default) costs the hooks one compare. */
export let jobObserver: JobObserver | undefined = undefined;

/** `job`'s W3C trace context as carrier keys; undefined when nothing was written, so the message leaves untouched. */
export function traceCarrier(job: ObservedJob): Record<string, string> | undefined {
  if (jobObserver === undefined) return undefined;
  const carrier: Record<string, string> = {};
  jobObserver.inject(job, carrier);
  for (const _ in carrier) return carrier;
  return undefined;
}

/** Installs (or with undefined removes) the observer; returns the one it replaced. */
export function setJobObserver(observer: JobObserver | undefined): JobObserver | undefined {
  const previous = jobObserver;
  jobObserver = observer;
  return previous;
}
