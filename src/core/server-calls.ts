import type { CancelReason } from "./cancel-reason.js";
import { settleCallJob } from "./call.js";
import { GraceTimers } from "./grace-timers.js";
import { type AnyJob, Job, settleJob } from "./job.js";
import { JobTable } from "./job-table.js";
import { LateReplies } from "./late-replies.js";
import { type JobCancelOrigin, type JobFailure, type JobInfo, jobObserver } from "./observer.js";
import { RecentKeys } from "./recent-keys.js";
import { guarded, reportErrors } from "./report-errors.js";

// The serving side of the one lifecycle (calls a peer sent): docs/decisions.md, "One call lifecycle".

/** The protocol's part of serving a call: all a binding supplies. */
export interface ServerCallProtocol<P, A> {
  /** A cancel reached the call (deepest first, once each): answer it, hold it or start its grace. Default: its grace starts. */
  cancelled?(call: ServerCall<P, A>, origin: JobCancelOrigin): void;
  /** The answer the grace's end gives for the work (an answer held for the children goes first). */
  graceAnswer?(call: ServerCall<P, A>): A;
  /** True when answering now answers for the peer that should have: its own reply will be late. */
  forPeer?(call: ServerCall<P, A>): boolean;
  /** Sends the call's one answer. */
  send?(call: ServerCall<P, A>, answer: A, forPeer: boolean): void;
  /** Runs once, when the call settles, whatever settled it. */
  settled?(call: ServerCall<P, A>): void;
  /** What the call is, for a job observer (tracing); asked only while one is installed. */
  describe?(call: ServerCall<P, A>): JobInfo;
  /** What an observer is told of an answer that is an error; asked only while one is installed. */
  failureOf?(answer: A): JobFailure | undefined;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyServerCall = ServerCall<any, any>;

export interface ServerCallsOptions {
  /** How long a cancelled call's work may take before the grace answers for it (none when absent), or a {@link sharedGrace}. */
  grace?: number | GraceTimers<AnyServerCall> | undefined;
  /** The answer ends the call (an ACP request); otherwise the call runs until `done` (an A2A task's work). */
  answerEnds?: boolean | undefined;
  /** How many settled keys (not those `forPeer` says the peer answered) and early cancels to remember per owner. */
  rememberMax?: number | undefined;
  /** How long each is remembered (default: ever). */
  rememberMs?: number | undefined;
  /** How many owners' memories, the least recently used forgotten first. Default 1. */
  rememberOwners?: number | undefined;
  /** A cancel for a key not in flight is remembered, so the call is born cancelled. */
  earlyCancels?: boolean | undefined;
}

/** A grace for the calls of several tables (each ends in its own table): one timer for all. */
export function sharedGrace(graceMs: number): GraceTimers<AnyServerCall> {
  return new GraceTimers(graceMs, (call) => call.calls.endGrace(call));
}

/**
 * What a cancel for a key did: `duplicate` (the call was already cancelling), `already-finished` (it
 * settled within the memory), `remembered` (no such call yet: it will be born cancelled if it starts
 * soon), `not-owner` (the call in flight is another owner's: nothing happened, and nothing is said).
 */
export type KeyCancelEffect = "cancelled" | "duplicate" | "already-finished" | "remembered" | "not-owner" | "unknown";

/** One owner's keys: they never answer for, or push out, another owner's. */
type Memory<K> = { readonly finished: LateReplies<K>; readonly early: RecentKeys<K> };

/** Calls whose last child settled while an answer was being given: they answer after it. */
let releasing: AnyServerCall[] | undefined;

/**
 * The calls a binding serves, by the protocol's key (or unkeyed): each a job under its parent that
 * only its owner (a principal; default "") cancels, with one grace timer for all, answered once (or
 * after its children settle) and settled once. Settled keys and early cancels are remembered with a bound.
 */
export class ServerCalls<K, P, A = unknown> {
  private readonly table = new JobTable<unknown, P>();
  /** Most recently used last. */
  private readonly memories = new Map<string, Memory<K>>();
  private readonly grace: GraceTimers<AnyServerCall> | undefined;

  constructor(private readonly options: ServerCallsOptions = {}) {
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

  get(key: K): ServerCall<P, A> | undefined {
    return this.table.get(key) as ServerCall<P, A> | undefined;
  }

  values(): IterableIterator<ServerCall<P, A>> {
    return this.table.values() as IterableIterator<ServerCall<P, A>>;
  }

  /** The running calls that pass `test`. */
  select(test: (call: ServerCall<P, A>) => boolean): ServerCall<P, A>[] {
    return this.table.selectRunning(test as (job: Job<P>) => boolean) as ServerCall<P, A>[];
  }

  /** Serves a call under `key` (or unkeyed); undefined when `key` is in flight. */
  start(key: undefined, payload: P, links?: ServerCallLinks, protocol?: ServerCallProtocol<P, A>): ServerCall<P, A>;
  start(key: K, payload: P, links?: ServerCallLinks, protocol?: ServerCallProtocol<P, A>): ServerCall<P, A> | undefined;
  start(key: K | undefined, payload: P, links: ServerCallLinks = {}, protocol: ServerCallProtocol<P, A> = {}) {
    if (key !== undefined && this.table.has(key)) return undefined;
    const call = new ServerCall<P, A>(payload, links.parent, links.owner ?? "", key, protocol, this);
    this.table.insert(key === undefined ? call : key, call);
    if (jobObserver !== undefined && protocol.describe !== undefined) jobObserver.onStart(call, protocol.describe(call));
    const memory = key === undefined ? undefined : this.memoryOf(call.owner, false);
    memory?.finished.forget(key as K);
    // An early cancel counts only within its window (the memory drops expired keys before it looks).
    if (memory?.early.delete(key as K) === true) call.cancel("external");
    return call;
  }

  /** A cancel from `owner` for `key`: cancels its call in flight, or says what is known of the key. */
  cancel(key: K, reason: CancelReason, owner = ""): KeyCancelEffect {
    const call = this.get(key);
    if (call !== undefined) {
      if (call.owner !== owner) return "not-owner";
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

  /** A reply to `key`, which is not in flight: true when its call settled within the memory (a late reply, to drop). */
  dropLate(key: K, owner = ""): boolean {
    return this.memoryOf(owner, false)?.finished.take(key) === true;
  }

  /** @internal A cancel reached `call`. */
  reached(call: ServerCall<P, A>, origin: JobCancelOrigin): void {
    if (call.protocol.cancelled !== undefined) call.protocol.cancelled(call, origin);
    else this.startGrace(call);
  }

  /** A cancelled call waits for its work's answer, at most the grace. */
  startGrace(call: ServerCall<P, A>): void {
    if (this.grace === undefined) return;
    this.grace.start(call);
    jobObserver?.onEvent(call, "grace");
  }

  /** The grace passed (or is cut short): the subtree's served calls are answered, deepest first, and settle. */
  endGrace(call: ServerCall<P, A>): void {
    if (call.isSettled) return;
    for (const child of [...call.children]) if (child instanceof ServerCall) child.calls.endGrace(child);
    // The grace bounds the whole subtree: children of other kinds still out do not hold it.
    try {
      const answer = call.held ?? call.protocol.graceAnswer?.(call);
      if (answer !== undefined) call.answer(answer);
    } finally {
      call.done();
    }
  }

  /** Answers `call` once its children have settled; until then the answer is held. */
  answerAfterChildren(call: ServerCall<P, A>, answer: A): void {
    if (call.answered) return;
    if (call.childCount > 0) call.held = answer;
    else call.answer(answer);
  }

  /** @internal The single place a call's one answer goes out (settling it first when `answerEnds`). */
  answered(call: ServerCall<P, A>, answer: A): void {
    const { protocol } = call;
    const forPeer = protocol.forPeer?.(call) === true;
    if (forPeer) jobObserver?.onEvent(call, "synthetic-answer");
    const outermost = releasing === undefined;
    if (outermost) releasing = [];
    try {
      if (this.options.answerEnds === true) this.settle(call, jobObserver && protocol.failureOf?.(answer), false);
      protocol.send?.(call, answer, forPeer);
    } finally {
      if (outermost) {
        const released = releasing ?? [];
        releasing = undefined;
        for (const parent of released) parent.answer(parent.held);
      }
    }
  }

  /** @internal Settles `call` once; `orphans`: the work is over, so the children it left pending are cancelled. */
  settle(call: ServerCall<P, A>, failure: JobFailure | undefined, orphans: boolean): void {
    if (call.isSettled) return;
    this.grace?.stop(call);
    this.table.delete(call.key === undefined ? call : call.key);
    if (call.key !== undefined && (call.protocol.forPeer?.(call) ?? true)) {
      this.memoryOf(call.owner, true)?.finished.remember(call.key as K, call);
    }
    const errors: unknown[] = [];
    if (orphans) settleCallJob(call, failure, errors);
    else settleJob(call, failure);
    if (call.protocol.settled !== undefined) guarded(() => call.protocol.settled?.(call), errors);
    reportErrors(errors, "settling a served call");
  }

  /** `owner`'s memory, now the most recently used; made when `create` (the oldest dropped past the cap). */
  private memoryOf(owner: string, create: boolean): Memory<K> | undefined {
    const memory = this.memories.get(owner);
    if (memory !== undefined && this.memories.size === 1) return memory;
    const { rememberMax = 0, rememberMs, rememberOwners = 1 } = this.options;
    if (memory === undefined && !(create && rememberMax > 0)) return undefined;
    const made = memory ?? {
      finished: new LateReplies<K>(rememberMax, rememberMs),
      early: new RecentKeys<K>(rememberMax, rememberMs),
    };
    this.memories.delete(owner);
    this.memories.set(owner, made);
    if (this.memories.size > rememberOwners) this.memories.delete(this.memories.keys().next().value as string);
    return made;
  }
}

/** `parent`: the job the call runs under (of any binding); `owner`: who sent it (default ""). */
export type ServerCallLinks = { readonly parent?: AnyJob | undefined; readonly owner?: string | undefined };

/** One call this process serves, a job: its work ends it with `done`, and its one answer goes out through `answer`. */
export class ServerCall<P, A = unknown> extends Job<P> {
  /** The answer, known but waiting for the call's children to settle first. */
  held: A | undefined = undefined;
  private answeredYet = false;

  constructor(
    payload: P,
    parent: AnyJob | undefined,
    /** Whose call it is: only a cancel from this owner reaches it. */
    readonly owner: string,
    readonly key: unknown,
    /** @internal */
    readonly protocol: ServerCallProtocol<P, A>,
    /** @internal */
    readonly calls: ServerCalls<unknown, P, A>,
  ) {
    super(payload, parent);
  }

  /** The call's job: pass it as `parent` to work that should stop with it. */
  get job(): Job<P> {
    return this;
  }

  get answered(): boolean {
    return this.answeredYet;
  }

  /** Gives the call its one answer (the protocol's `send`): true the first time, false after (a late answer: dropped). */
  answer(answer: A): boolean {
    if (this.answeredYet) return false;
    this.answeredYet = true;
    this.calls.answered(this, answer);
    return true;
  }

  /** The work is over (answered, failed or stopped): settles once, cancelling the work left pending under it. */
  done(): void {
    this.calls.settle(this, undefined, true);
  }

  protected override cancelReached(origin: JobCancelOrigin): void {
    this.calls.reached(this, origin);
  }

  protected override lastChildSettled(): void {
    if (this.held === undefined) return;
    if (releasing !== undefined) releasing.push(this);
    else this.answer(this.held);
  }
}
