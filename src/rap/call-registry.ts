import { type AnyJob, type CancelReason, Job, jobObserver } from "../core/index.js";
import { assertRapId, callKey } from "./ids.js";
import { RecentKeys } from "../core/recent-keys.js";
import { rapCallInfo } from "./tracing.js";

/** The payload of a tool server's own call job. */
export interface ServerCallPayload {
  readonly protocol: "rap-server";
  readonly threadId: string;
  readonly toolCallId: string;
}

/**
 * Who sent a notice or an invocation, as the server's `authenticate` names it. Everyone whose
 * check answers just `true` is the same principal, {@link ANONYMOUS}.
 */
export type Principal = string;
export const ANONYMOUS: Principal = "";

/** A call the server is working on. */
export interface TrackedCall {
  /** Whose call it is: only a notice from this principal cancels it. */
  readonly owner: Principal;
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
  | "remembered"
  /** The call in flight belongs to another principal: nothing happened (and the answer says nothing). */
  | "not-owner";

export interface CallRegistryOptions {
  /** How long finished calls and early cancels are remembered. Default {@link DEFAULT_REMEMBER_MS}. */
  readonly rememberMs?: number;
  /** At most this many of each, oldest forgotten first. Default {@link DEFAULT_REMEMBER_MAX}. */
  readonly rememberMax?: number;
}

/** Long enough to cover a notice that overtakes its invocation; short enough to hold little. */
export const DEFAULT_REMEMBER_MS = 60_000;
export const DEFAULT_REMEMBER_MAX = 10_000;

export interface TrackOptions {
  /** Work this call runs under (of any binding). */
  readonly parent?: AnyJob;
  /** The principal that sent the invocation (what `authenticate` returned for it). Default {@link ANONYMOUS}. */
  readonly owner?: Principal;
  /** The invocation's HTTP headers: their W3C trace context joins the call to the runtime's trace. */
  readonly traceHeaders?: Readonly<Record<string, unknown>>;
}

/**
 * A tool server's calls in flight, keyed by (thread_id, tool_call_id), as jobs of the shared
 * tree, each owned by the principal that invoked it: a notice cancels (or pre-cancels) only its
 * own principal's calls. Memory is bounded: a call leaves when it is done, and the finished
 * calls and early cancels it remembers are capped in both time and number.
 */
export class CallRegistry {
  private readonly calls = new Map<string, TrackedCall>();
  /** Keyed by owner and call (`ownedKey`): one principal's memory never answers for another's. */
  private readonly finished: RecentKeys<string>;
  private readonly early: RecentKeys<string>;

  constructor(options: CallRegistryOptions = {}) {
    const windowMs = options.rememberMs ?? DEFAULT_REMEMBER_MS;
    const max = options.rememberMax ?? DEFAULT_REMEMBER_MAX;
    this.finished = new RecentKeys(max, windowMs);
    this.early = new RecentKeys(max, windowMs);
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
  track(threadId: string, toolCallId: string, options: TrackOptions = {}): TrackedCall {
    assertRapId("thread_id", threadId);
    assertRapId("tool_call_id", toolCallId);
    const key = callKey(threadId, toolCallId);
    const existing = this.calls.get(key);
    if (existing !== undefined) return existing;
    const owner = options.owner ?? ANONYMOUS;
    const owned = ownedKey(owner, key);
    const job = new Job<ServerCallPayload>({ protocol: "rap-server", threadId, toolCallId }, options.parent);
    jobObserver?.onStart(job, rapCallInfo(threadId, toolCallId, "server", options.traceHeaders));
    const signal = job.signal;
    const call: TrackedCall = {
      owner,
      signal,
      job,
      done: () => {
        if (!job.settle()) return;
        this.calls.delete(key);
        this.finished.add(owned);
      },
    };
    this.calls.set(key, call);
    this.finished.delete(owned);
    // An early cancel counts only within its window (the memory drops expired keys before it looks).
    if (this.early.delete(owned)) job.cancel("external");
    return call;
  }

  /** Aborts every call in flight (at shutdown: reason `shutdown`); returns how many it cancelled. */
  cancelAll(reason: CancelReason = "shutdown"): number {
    let count = 0;
    for (const call of [...this.calls.values()]) if (call.job.cancel(reason) === "cancelled") count++;
    return count;
  }

  /** Applies a cancel notice from `principal` (ids already validated). */
  cancel(threadId: string, toolCallId: string, reason: CancelReason = "external", principal: Principal = ANONYMOUS): NoticeEffect {
    const key = callKey(threadId, toolCallId);
    const entry = this.calls.get(key);
    if (entry !== undefined) {
      if (entry.owner !== principal) return "not-owner";
      return entry.job.cancel(reason) === "cancelled" ? "cancelled" : "duplicate";
    }
    const owned = ownedKey(principal, key);
    if (this.finished.has(owned)) return "already-finished";
    this.early.add(owned);
    return "remembered";
  }
}

/** The memory key of a call as seen by one principal; the length prefix keeps it unambiguous. */
function ownedKey(principal: Principal, key: string): string {
  return `${principal.length}:${principal}${key}`;
}
