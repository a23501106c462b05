import type { CancelReason } from "./cancel-reason.js";
import { settleCallJob } from "./call.js";
import { GraceTimers } from "./grace-timers.js";
import { type AnyJob, Job, type JobOwner, jobOwner, settleJob } from "./job.js";
import { JobTable } from "./job-table.js";
import { LateReplies } from "./late-replies.js";
import { type JobCancelOrigin, type JobFailure, type JobInfo, jobObserver } from "./observer.js";
import { RecentKeys } from "./recent-keys.js";
import { guarded, reportErrors } from "./report-errors.js";

// The serving side of the one lifecycle (docs/decisions.md, "One call lifecycle"): calls a peer sent,
// each owed one answer. A call is a plain Job whose owner is its table: nothing per call but the job.

/** The protocol's part of serving calls, one for all the calls of a table: all a binding supplies. */
export interface ServerCallProtocol<K, P, A> {
  /** The call's key (the protocol's id); undefined for an unkeyed call. */
  keyOf(payload: P): K | undefined;
  /** Who sent the call: only a cancel from this owner reaches it. Default "". */
  ownerOf?(payload: P): string;
  /** A cancel reached the call (deepest first, once each): answer it, hold it or start its grace. Default: its grace starts. */
  cancelled?(call: Job<P>, origin: JobCancelOrigin): void;
  /** The grace passed unanswered: the answer to give (a held answer goes first), or none if it answered. It then settles. */
  graceEnded?(call: Job<P>): A | undefined;
  /** True when answering now answers for the peer that should have: its own reply will be late. */
  forPeer?(call: Job<P>): boolean;
  /** Sends the call's one answer. A table that sends answers (the ACP engine) settles a call by its answer. */
  send?(call: Job<P>, answer: A, forPeer: boolean): void;
  /** Runs once, when the work ends a call with `done`. */
  settled?(call: Job<P>): void;
  /** What an observer is told of an answer that is an error; asked only while one is installed. */
  failureOf?(answer: A): JobFailure | undefined;
}

export interface ServerCallsOptions {
  /** How long a cancelled call may take before `graceEnded` answers for it (none when absent), or a {@link sharedGrace}. */
  grace?: number | GraceTimers<AnyJob> | undefined;
  /** How many settled keys (answered for the peer, where a table sends answers) and early cancels to remember per owner. */
  rememberMax?: number | undefined;
  /** How long each is remembered (default: ever). */
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyServerCalls = ServerCalls<any, any, any>;

/** One owner's keys: they never answer for, or push out, another owner's. */
type Memory<K> = { readonly finished: LateReplies<K>; readonly early: RecentKeys<K> };

/** A grace for the calls of several tables (each ends in its own table): one timer for all. */
export function sharedGrace(graceMs: number): GraceTimers<AnyJob> {
  return new GraceTimers(graceMs, (call) => (jobOwner(call) as AnyServerCalls).endGrace(call));
}

/** True while an answer is being given. */
let answering = false;
/** Calls whose last child settled while an answer was being given: they answer after it. */
const released: AnyJob[] = [];

/**
 * The calls a binding serves, by the protocol's key (or unkeyed): each a job under its parent that
 * only its owner cancels, with one grace timer for all, answered once (after its children settle
 * when the answer is held) and settled once. Settled keys and early cancels are remembered with a bound.
 */
export class ServerCalls<K, P, A = never> implements JobOwner {
  private readonly table = new JobTable<unknown, P>();
  /** Answers known but waiting for their call's children to settle first: rare. */
  private readonly held = new Map<AnyJob, A>();
  /** Most recently used last. */
  private readonly memories = new Map<string, Memory<K>>();
  private readonly grace: GraceTimers<AnyJob> | undefined;

  constructor(
    /** @internal */
    readonly protocol: ServerCallProtocol<K, P, A>,
    private readonly options: ServerCallsOptions = {},
  ) {
    const { grace } = options;
    this.grace = typeof grace === "number" ? sharedGrace(grace) : grace;
  }

  /** Calls in flight; zero at quiescence. */
  get size(): number {
    return this.table.size;
  }

  /** Settled keys and early cancels remembered. */
  get remembered(): number {
    let count = 0;
    for (const { finished, early } of this.memories.values()) count += finished.size + early.size;
    return count;
  }

  get(key: K): Job<P> | undefined {
    return this.table.get(key);
  }

  values(): IterableIterator<Job<P>> {
    return this.table.values();
  }

  /** The running calls that pass `test`. */
  selectRunning(test: (call: Job<P>) => boolean): Job<P>[] {
    return this.table.selectRunning(test);
  }

  /** Serves a call (`describe` tells a job observer what it is); undefined when its key is in flight. */
  start(payload: P, parent?: AnyJob, describe?: () => JobInfo): Job<P> | undefined {
    const key = this.protocol.keyOf(payload);
    if (key !== undefined && this.table.has(key)) return undefined;
    const call = new Job<P>(payload, parent, this);
    this.table.insert(key === undefined ? call : key, call);
    if (jobObserver !== undefined && describe !== undefined) jobObserver.onStart(call, describe());
    // An early cancel counts only within its window (the memory drops expired keys before it looks).
    if (key !== undefined && this.options.earlyCancels === true) {
      if (this.memoryOf(this.ownerOf(call), false)?.early.delete(key) === true) call.cancel("external");
    }
    return call;
  }

  /** A cancel from `owner` for `key`: cancels its call in flight, or says what is known of the key. */
  cancel(key: K, reason: CancelReason, owner = ""): KeyCancelEffect {
    const call = this.get(key);
    if (call !== undefined) {
      if (this.ownerOf(call) !== owner) return "not-owner";
      return call.cancel(reason) === "cancelled" ? "cancelled" : "duplicate";
    }
    if (this.memoryOf(owner, false)?.finished.has(key) === true) return "already-finished";
    if (this.options.earlyCancels !== true) return "unknown";
    this.memoryOf(owner, true)?.early.add(key);
    return "remembered";
  }

  /** Cancels every call in flight; returns how many it cancelled. */
  cancelAll(reason: CancelReason): number {
    let count = 0;
    for (const call of [...this.values()]) if (call.cancel(reason) === "cancelled") count++;
    return count;
  }

  /** A reply to `key`, which is not in flight: true when it is a late one (answered for its peer), to drop. */
  dropLate(key: K, owner = ""): boolean {
    return this.memoryOf(owner, false)?.finished.take(key) === true;
  }

  /** Whose call it is: only a cancel from this owner reaches it. */
  private ownerOf(call: Job<P>): string {
    return this.protocol.ownerOf?.(call.payload) ?? "";
  }

  /** The answer `call` holds until its children settle, if any. */
  heldOf(call: Job<P>): A | undefined {
    return this.held.get(call);
  }

  /** @internal A cancel reached `call`. */
  cancelReached(call: Job<P>, origin: JobCancelOrigin): void {
    if (this.protocol.cancelled !== undefined) this.protocol.cancelled(call, origin);
    else this.grace?.start(call);
  }

  /** A cancelled call waits for its work's answer, at most the grace. */
  startGrace(call: Job<P>): void {
    this.grace?.start(call);
    jobObserver?.onEvent(call, "grace");
  }

  /** The grace passed (or is cut short): the call is answered for (first its subtree's, where answers are sent) and settles. */
  endGrace(call: Job<P>): void {
    if (call.isSettled) return;
    // The grace bounds the whole subtree: children of other kinds still out do not hold it.
    if (this.protocol.send !== undefined) {
      for (const child of [...call.children]) {
        const owner = jobOwner(child);
        if (owner instanceof ServerCalls && owner.protocol.send !== undefined) owner.endGrace(child);
      }
    }
    const errors: unknown[] = [];
    guarded(() => {
      const answer = this.held.get(call) ?? this.protocol.graceEnded?.(call);
      if (answer !== undefined) this.answer(call, answer);
    }, errors);
    this.done(call);
    reportErrors(errors, "ending a grace");
  }

  /** Answers `call` once its children have settled; until then the answer is held. */
  answerAfterChildren(call: Job<P>, answer: A): void {
    if (call.isSettled) return;
    if (call.childCount > 0) this.held.set(call, answer);
    else this.answer(call, answer);
  }

  /** The single place a call gets its one answer, which settles it; false when it already had one. */
  answer(call: Job<P>, answer: A): boolean {
    // A call not settled is in its table under its entry: `start` put it there, only settling takes it out.
    if (call.isSettled) return false;
    const key = this.protocol.keyOf(call.payload);
    const forPeer = this.protocol.forPeer?.(call) === true;
    let failure: JobFailure | undefined;
    if (jobObserver !== undefined) {
      if (forPeer) jobObserver.onEvent(call, "synthetic-answer");
      failure = this.protocol.failureOf?.(answer);
    }
    this.table.delete(key === undefined ? call : key);
    if (!call.isRunning) this.grace?.stop(call); // only a cancelled call has a grace
    if (this.held.size > 0) this.held.delete(call);
    // One list for every answer, not a new one each: garbage on every message otherwise.
    const outermost = !answering;
    answering = true;
    try {
      settleJob(call, failure);
      if (forPeer && key !== undefined) this.memoryOf(this.ownerOf(call), true)?.finished.remember(key, call);
      this.protocol.send?.(call, answer, forPeer);
    } finally {
      if (outermost) {
        answering = false;
        if (released.length > 0) {
          for (const parent of released.splice(0)) (jobOwner(parent) as AnyServerCalls).lastChildSettled(parent);
        }
      }
    }
    return true;
  }

  /** The work is over (answered, failed or stopped): settles `call` once, cancelling the work left pending under it. */
  done(call: Job<P>): void {
    if (call.isSettled) return;
    const key = this.protocol.keyOf(call.payload);
    this.grace?.stop(call);
    this.table.delete(key === undefined ? call : key);
    if (this.held.size > 0) this.held.delete(call);
    if (key !== undefined) this.memoryOf(this.ownerOf(call), true)?.finished.remember(key);
    const errors: unknown[] = [];
    settleCallJob(call, undefined, errors);
    if (this.protocol.settled !== undefined) guarded(() => this.protocol.settled?.(call), errors);
    reportErrors(errors, "settling a served call");
  }

  /** @internal The last child of `call` settled: a held answer goes now (after the answer being given, if one is). */
  lastChildSettled(call: Job<P>): void {
    const answer = this.held.get(call);
    if (answer === undefined) return;
    if (answering) released.push(call);
    else this.answer(call, answer);
  }

  /** `owner`'s memory, now the most recently used; made when `create` (the oldest dropped past the cap). */
  private memoryOf(owner: string, create: boolean): Memory<K> | undefined {
    const { rememberMax = 0, rememberMs, rememberOwners = 1 } = this.options;
    let memory = this.memories.get(owner);
    if (memory === undefined) {
      if (!create || rememberMax <= 0) return undefined;
      memory = { finished: new LateReplies<K>(rememberMax, rememberMs), early: new RecentKeys<K>(rememberMax, rememberMs) };
    }
    this.memories.delete(owner);
    this.memories.set(owner, memory);
    if (this.memories.size > rememberOwners) this.memories.delete(this.memories.keys().next().value as string);
    return memory;
  }
}
