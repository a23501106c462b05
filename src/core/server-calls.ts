import type { CancelReason } from "./cancel-reason.js";
import { settleCallJob } from "./call.js";
import { GraceTimers } from "./grace-timers.js";
import { type AnyJob, Job } from "./job.js";
import { type JobInfo, jobObserver } from "./observer.js";
import { RecentKeys } from "./recent-keys.js";
import { guarded, reportErrors } from "./report-errors.js";

// The serving side of the one lifecycle (calls a peer sent): docs/decisions.md, "One call lifecycle".

/** The protocol's part of serving a call: all a binding supplies. */
export interface ServerCallProtocol<P> {
  /** The grace passed and the work has not settled the call: answer for it (the call then settles). */
  graceEnded?(call: ServerCall<P>): void;
  /** Runs once, when the call settles, whatever settled it. */
  settled?(call: ServerCall<P>): void;
  /** What the call is, for a job observer (tracing); asked only while one is installed. */
  describe?(call: ServerCall<P>): JobInfo;
}

export interface ServerCallsOptions {
  /** How long a cancelled call's work may take before `graceEnded` answers for it; no grace when absent. */
  graceMs?: number | undefined;
  /** How many settled keys (and early cancels) to remember per owner, for `rememberMs` (default: ever). */
  rememberMax?: number | undefined;
  rememberMs?: number | undefined;
  /** How many owners' memories, the least recently used forgotten first. Default 1. */
  rememberOwners?: number | undefined;
  /** A cancel for a key not in flight is remembered, so the call is born cancelled. */
  earlyCancels?: boolean | undefined;
}

/**
 * What a cancel for a key did: `duplicate` (the call was already cancelling), `already-finished` (it
 * settled within the memory), `remembered` (no such call yet: it will be born cancelled if it starts
 * soon), `not-owner` (the call in flight is another owner's: nothing happened, and nothing is said).
 */
export type KeyCancelEffect = "cancelled" | "duplicate" | "already-finished" | "remembered" | "not-owner" | "unknown";

/** One owner's keys: they never answer for, or push out, another owner's. */
type Memory<K> = { readonly finished: RecentKeys<K>; readonly early: RecentKeys<K> };

/**
 * The calls a binding serves, by the protocol's key (or unkeyed): each a job under its parent that
 * only its owner (a principal; default "") cancels, with one grace timer for all, answered once and
 * settled once. Settled keys and early cancels are remembered with a bound.
 */
export class ServerCalls<K, P> {
  private readonly live = new Map<unknown, ServerCall<P>>();
  /** Most recently used last. */
  private readonly memories = new Map<string, Memory<K>>();
  private readonly grace: GraceTimers<ServerCall<P>> | undefined;

  constructor(private readonly options: ServerCallsOptions = {}) {
    const { graceMs } = options;
    this.grace = graceMs === undefined ? undefined : new GraceTimers(graceMs, (call) => this.endGrace(call));
  }

  /** Calls in flight; zero at quiescence. */
  get size(): number {
    return this.live.size;
  }

  /** Settled keys and early cancels remembered. */
  get remembered(): number {
    let count = 0;
    for (const { finished, early } of this.memories.values()) count += finished.size + early.size;
    return count;
  }

  get(key: K): ServerCall<P> | undefined {
    return this.live.get(key);
  }

  values(): IterableIterator<ServerCall<P>> {
    return this.live.values();
  }

  /** Serves a call under `key` (or unkeyed); undefined when `key` is in flight. */
  start(key: undefined, payload: P, links?: ServerCallLinks, protocol?: ServerCallProtocol<P>): ServerCall<P>;
  start(key: K, payload: P, links?: ServerCallLinks, protocol?: ServerCallProtocol<P>): ServerCall<P> | undefined;
  start(key: K | undefined, payload: P, links: ServerCallLinks = {}, protocol: ServerCallProtocol<P> = {}) {
    if (key !== undefined && this.live.has(key)) return undefined;
    const call = new ServerCall<P>(new Job(payload, links.parent), links.owner ?? "", key, protocol, this.settle);
    this.live.set(key ?? call, call);
    if (jobObserver !== undefined && protocol.describe !== undefined) jobObserver.onStart(call.job, protocol.describe(call));
    if (this.grace !== undefined) call.job.onCancel(() => this.grace?.start(call));
    const memory = key === undefined ? undefined : this.memoryOf(call.owner, false);
    memory?.finished.delete(key as K);
    // An early cancel counts only within its window (the memory drops expired keys before it looks).
    if (memory?.early.delete(key as K) === true) call.job.cancel("external");
    return call;
  }

  /** A cancel from `owner` for `key`: cancels its call in flight, or says what is known of the key. */
  cancel(key: K, reason: CancelReason, owner = ""): KeyCancelEffect {
    const call = this.live.get(key);
    if (call !== undefined) {
      if (call.owner !== owner) return "not-owner";
      return call.job.cancel(reason) === "cancelled" ? "cancelled" : "duplicate";
    }
    if (this.memoryOf(owner, false)?.finished.has(key) === true) return "already-finished";
    if (this.options.earlyCancels !== true) return "unknown";
    this.memoryOf(owner, true)?.early.add(key);
    return "remembered";
  }

  /** Cancels every call in flight; returns how many it cancelled. */
  cancelAll(reason: CancelReason): number {
    let count = 0;
    for (const call of [...this.live.values()]) if (call.job.cancel(reason) === "cancelled") count++;
    return count;
  }

  /** The grace passed: the protocol answers for the work, and the call settles whatever it threw. */
  private endGrace(call: ServerCall<P>): void {
    const errors: unknown[] = [];
    guarded(() => call.protocol.graceEnded?.(call), errors);
    call.done();
    reportErrors(errors, "ending a grace");
  }

  private readonly settle = (call: ServerCall<P>): void => {
    this.grace?.stop(call);
    this.live.delete(call.key ?? call);
    if (call.key !== undefined) this.memoryOf(call.owner, true)?.finished.add(call.key as K);
    const errors: unknown[] = [];
    settleCallJob(call.job, undefined, errors);
    guarded(() => call.protocol.settled?.(call), errors);
    reportErrors(errors, "settling a served call");
  };

  /** `owner`'s memory, now the most recently used; made when `create` (the oldest dropped past the cap). */
  private memoryOf(owner: string, create: boolean): Memory<K> | undefined {
    const { rememberMax = 0, rememberMs, rememberOwners = 1 } = this.options;
    const keys = () => new RecentKeys<K>(rememberMax, rememberMs);
    const memory = this.memories.get(owner) ?? (create && rememberMax > 0 ? { finished: keys(), early: keys() } : undefined);
    if (memory === undefined) return undefined;
    this.memories.delete(owner);
    this.memories.set(owner, memory);
    if (this.memories.size > rememberOwners) this.memories.delete(this.memories.keys().next().value as string);
    return memory;
  }
}

/** `parent`: the job the call runs under (of any binding); `owner`: who sent it (default ""). */
export type ServerCallLinks = { readonly parent?: AnyJob | undefined; readonly owner?: string | undefined };

/** One call this process serves: its work ends it with `done`, and sends its one answer when `answer()` says so. */
export class ServerCall<P> {
  private answeredYet = false;
  private settledYet = false;

  constructor(
    /** The call's job: pass it as `parent` to work that should stop with it. */
    readonly job: Job<P>,
    /** Whose call it is: only a cancel from this owner reaches it. */
    readonly owner: string,
    readonly key: unknown,
    /** @internal */
    readonly protocol: ServerCallProtocol<P>,
    private readonly release: (call: ServerCall<P>) => void,
  ) {}

  /** Aborts when the call is cancelled (or its cancel came before it). */
  get signal(): AbortSignal {
    return this.job.signal;
  }

  get answered(): boolean {
    return this.answeredYet;
  }

  /** Claims the call's one answer: true the first time (send it), false after (a late answer: drop it). */
  answer(): boolean {
    if (this.answeredYet) return false;
    this.answeredYet = true;
    return true;
  }

  /** The work is over (answered, failed or stopped): settles once, cancelling the work left pending under it. */
  done(): void {
    if (this.settledYet) return;
    this.settledYet = true;
    this.release(this);
  }
}
