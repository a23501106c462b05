import type { CallLinks } from "../core/call.js";
import { type CancelReason, Job, jobObserver, settleJob } from "../core/index.js";
import { assertRapId, callKey } from "./messages.js";
import { RecentKeys } from "../core/recent-keys.js";
import { rapCallInfo } from "./tracing.js";

/** The payload of a tool server's own call job. */
export interface ServerCallPayload {
  readonly protocol: "rap-server";
  readonly threadId: string;
  readonly toolCallId: string;
}

/** Who sent a notice or an invocation, as `authenticate` names it; a plain `true` is {@link ANONYMOUS}. */
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

/** What a notice did, for the server's logs: each is answered 200 (RAP: no call state in the response). */
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
  /** At most this many of each per principal, oldest forgotten first. Default {@link DEFAULT_REMEMBER_MAX}. */
  readonly rememberMax?: number;
  /** At most this many principals' memories, least recently used forgotten first. Default {@link DEFAULT_REMEMBER_PRINCIPALS}. */
  readonly rememberPrincipals?: number;
}

/** Long enough to cover a notice that overtakes its invocation; short enough to hold little. */
export const DEFAULT_REMEMBER_MS = 60_000;
export const DEFAULT_REMEMBER_MAX = 10_000;
export const DEFAULT_REMEMBER_PRINCIPALS = 1_000;

/** One principal's finished calls and early cancels: one principal never pushes out another's. */
interface Memory {
  readonly finished: RecentKeys<string>;
  readonly early: RecentKeys<string>;
}

/** `track` of ids in flight for another principal: the second invocation must be refused. */
export class CallOwnedError extends Error {
  override readonly name = "CallOwnedError";
  constructor(readonly threadId: string, readonly toolCallId: string) {
    super(`tool call ${JSON.stringify(toolCallId)} of thread ${JSON.stringify(threadId)} is in flight for another principal`);
  }
}

/** `parent`: work this call runs under (of any binding). */
export interface TrackOptions extends Pick<CallLinks, "parent"> {
  /** The principal that sent the invocation (what `authenticate` returned for it). Default {@link ANONYMOUS}. */
  readonly owner?: Principal;
  /** The invocation's HTTP headers: their W3C trace context joins the call to the runtime's trace. */
  readonly traceHeaders?: Readonly<Record<string, unknown>>;
}

/**
 * A tool server's calls in flight by (thread_id, tool_call_id), as jobs of the tree, each owned by the
 * principal that invoked it, whose notices alone cancel (or pre-cancel) it. Its memories are bounded.
 */
export class CallRegistry {
  private readonly calls = new Map<string, TrackedCall>();
  /** Per principal, most recently used last: one principal's memory never answers for, or evicts, another's. */
  private readonly memories = new Map<Principal, Memory>();

  constructor(private readonly options: CallRegistryOptions = {}) {}

  /** `principal`'s memory, now the most recently used; made when `create` (the oldest dropped past the cap). */
  private memoryOf(principal: Principal, create: boolean): Memory | undefined {
    const { rememberMs = DEFAULT_REMEMBER_MS, rememberMax = DEFAULT_REMEMBER_MAX } = this.options;
    const keys = () => new RecentKeys<string>(rememberMax, rememberMs);
    const memory = this.memories.get(principal) ?? (create ? { finished: keys(), early: keys() } : undefined);
    if (memory === undefined) return undefined;
    this.memories.delete(principal);
    this.memories.set(principal, memory);
    const maxPrincipals = this.options.rememberPrincipals ?? DEFAULT_REMEMBER_PRINCIPALS;
    if (this.memories.size > maxPrincipals) this.memories.delete(this.memories.keys().next().value as Principal);
    return memory;
  }

  /** Calls in flight. */
  get size(): number {
    return this.calls.size;
  }

  /** Finished calls and early cancels still remembered. */
  get remembered(): number {
    let count = 0;
    for (const { finished, early } of this.memories.values()) count += finished.size + early.size;
    return count;
  }

  /**
   * Starts tracking a call (or returns its owner's call of the same ids), aborted already when its cancel
   * came first. Throws {@link CallOwnedError} when the ids are in flight for another principal.
   */
  track(threadId: string, toolCallId: string, options: TrackOptions = {}): TrackedCall {
    assertRapId("thread_id", threadId);
    assertRapId("tool_call_id", toolCallId);
    const key = callKey(threadId, toolCallId);
    const owner = options.owner ?? ANONYMOUS;
    const existing = this.calls.get(key);
    if (existing !== undefined) {
      if (existing.owner !== owner) throw new CallOwnedError(threadId, toolCallId);
      return existing;
    }
    const owned = ownedKey(owner, key);
    const job = new Job<ServerCallPayload>({ protocol: "rap-server", threadId, toolCallId }, options.parent);
    jobObserver?.onStart(job, rapCallInfo(threadId, toolCallId, "server", options.traceHeaders));
    const call: TrackedCall = {
      owner,
      signal: job.signal,
      job,
      done: () => {
        if (!settleJob(job)) return;
        this.calls.delete(key);
        this.memoryOf(owner, true)?.finished.add(owned);
      },
    };
    this.calls.set(key, call);
    const memory = this.memoryOf(owner, false);
    memory?.finished.delete(owned);
    // An early cancel counts only within its window (the memory drops expired keys before it looks).
    if (memory?.early.delete(owned) === true) job.cancel("external");
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
    const memory = this.memoryOf(principal, true) as Memory;
    if (memory.finished.has(owned)) return "already-finished";
    memory.early.add(owned);
    return "remembered";
  }
}

/** The memory key of a call as seen by one principal; the length prefix keeps it unambiguous. */
function ownedKey(principal: Principal, key: string): string {
  return `${principal.length}:${principal}${key}`;
}
