import { type AnyJob, type CancelReason, Job } from "../core/index.js";
import { assertRapId, callKey } from "./ids.js";
import { TimedKeys } from "./timed-keys.js";

/** The payload of a tool server's own call job. */
export interface ServerCallPayload {
  readonly protocol: "rap-server";
  readonly threadId: string;
  readonly toolCallId: string;
}

/** A call the server is working on. */
export interface TrackedCall {
  /** Aborts when a cancel notice names this call (or arrived before it was tracked). */
  readonly signal: AbortSignal;
  /** The call's job: pass it as `parent` to work that should stop with it. */
  readonly job: Job<ServerCallPayload>;
  /** The work is over (result sent, failed or stopped). Idempotent. */
  done(): void;
}

/**
 * What a notice did. Every one of these is answered 200: the runtime is told nothing
 * (RAP: no call state in the response), the effect is for the server's own logs.
 */
export type NoticeEffect =
  | "cancelled"
  /** A second notice for a call already cancelling. */
  | "duplicate"
  /** The call finished within the remembered window. */
  | "already-finished"
  /** No such call yet: remembered, so the call starts cancelled if it is tracked soon. */
  | "remembered";

export interface CallRegistryOptions {
  /** How long finished calls and early cancels are remembered. Default {@link DEFAULT_REMEMBER_MS}. */
  readonly rememberMs?: number;
  /** At most this many of each, oldest forgotten first. Default {@link DEFAULT_REMEMBER_MAX}. */
  readonly rememberMax?: number;
}

/** Long enough to cover a notice that overtakes its invocation; short enough to hold little. */
export const DEFAULT_REMEMBER_MS = 60_000;
export const DEFAULT_REMEMBER_MAX = 10_000;

/**
 * A tool server's calls in flight, keyed by (thread_id, tool_call_id), as jobs of the shared
 * tree. Memory is bounded: a call leaves when it is done, and the finished calls and early
 * cancels it remembers are capped in both time and number.
 */
export class CallRegistry {
  private readonly calls = new Map<string, TrackedCall>();
  private readonly finished: TimedKeys;
  private readonly early: TimedKeys;

  constructor(options: CallRegistryOptions = {}) {
    const windowMs = options.rememberMs ?? DEFAULT_REMEMBER_MS;
    const max = options.rememberMax ?? DEFAULT_REMEMBER_MAX;
    this.finished = new TimedKeys(windowMs, max);
    this.early = new TimedKeys(windowMs, max);
  }

  /** Calls in flight. */
  get size(): number {
    return this.calls.size;
  }

  /** Finished calls and early cancels still remembered. */
  get remembered(): number {
    return this.finished.size + this.early.size;
  }

  /**
   * Starts tracking a call, or returns the call already tracked under the same ids. A call
   * whose cancel arrived first starts with its signal aborted.
   */
  track(threadId: string, toolCallId: string, options: { parent?: AnyJob } = {}): TrackedCall {
    assertRapId("thread_id", threadId);
    assertRapId("tool_call_id", toolCallId);
    const key = callKey(threadId, toolCallId);
    const existing = this.calls.get(key);
    if (existing !== undefined) return existing;
    const job = new Job<ServerCallPayload>({ protocol: "rap-server", threadId, toolCallId }, options.parent);
    const signal = job.signal;
    const call: TrackedCall = {
      signal,
      job,
      done: () => {
        if (!job.settle()) return;
        this.calls.delete(key);
        this.finished.add(key);
      },
    };
    this.calls.set(key, call);
    this.finished.delete(key);
    if (this.early.delete(key)) job.cancel("external");
    return call;
  }

  /** Aborts every call in flight (at shutdown: reason `shutdown`); returns how many it cancelled. */
  cancelAll(reason: CancelReason = "shutdown"): number {
    let count = 0;
    for (const call of [...this.calls.values()]) if (call.job.cancel(reason) === "cancelled") count++;
    return count;
  }

  /** Applies a cancel notice (ids already validated). */
  cancel(threadId: string, toolCallId: string, reason: CancelReason = "external"): NoticeEffect {
    const key = callKey(threadId, toolCallId);
    const entry = this.calls.get(key);
    if (entry !== undefined) return entry.job.cancel(reason) === "cancelled" ? "cancelled" : "duplicate";
    if (this.finished.has(key)) return "already-finished";
    this.early.add(key);
    return "remembered";
  }
}
