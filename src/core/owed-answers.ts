import { GraceTimers } from "./grace-timers.js";
import { type AnyJob, Job, settleJob } from "./job.js";
import { JobTable } from "./job-table.js";
import { LateReplies } from "./late-replies.js";
import { type JobCancelOrigin, type JobFailure, jobObserver } from "./observer.js";

// The receiving side of the one lifecycle: requests a peer is owed exactly one answer for.
// docs/decisions.md, "One call lifecycle".

/** The protocol's part of answering: all a binding (the ACP engine) supplies. */
export interface OwedProtocol<K, P, A> {
  keyOf(job: OwedJob<P, A>): K;
  /** A cancel reached `job` (deepest first, once each): answer it, hold it, or start its grace. */
  cancelled(job: OwedJob<P, A>, origin: JobCancelOrigin): void;
  /** The answer given when the grace passes unanswered (a held answer goes first). */
  graceAnswer(job: OwedJob<P, A>): A;
  /** True when answering now answers for the peer that should have: its own reply will be late. */
  forPeer(job: OwedJob<P, A>): boolean;
  /** Sends the job's one answer. */
  send(job: OwedJob<P, A>, answer: A, forPeer: boolean): void;
  /** What an observer is told of an answer that is an error; asked only while one is installed. */
  failureOf?(answer: A): JobFailure | undefined;
}

/** A request in flight that its issuer is owed one answer for. */
export class OwedJob<P, A> extends Job<P> {
  /** The answer, known but waiting for the job's children to settle first. */
  held: A | undefined = undefined;

  constructor(
    payload: P,
    parent: AnyJob | undefined,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    readonly owner: OwedAnswers<any, P, A>,
  ) {
    super(payload, parent);
  }

  protected override cancelReached(origin: JobCancelOrigin): void {
    this.owner.reached(this, origin);
  }

  protected override lastChildSettled(): void {
    if (this.held !== undefined) releaseHeld(this);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyOwedJob = OwedJob<any, any>;

/** A grace for the requests of several tables (each ends in its own table): one timer for all. */
export function sharedGrace(graceMs: number): GraceTimers<AnyOwedJob> {
  return new GraceTimers(graceMs, (job) => job.owner.endGrace(job));
}

/** Parents whose last child settled while an answer was being given: they answer after it. */
let releasing: OwedJob<unknown, unknown>[] | undefined;

function releaseHeld(job: OwedJob<unknown, unknown>): void {
  if (releasing !== undefined) releasing.push(job);
  else job.owner.answer(job, job.held);
}

/**
 * One issuer's requests in flight by id: answer-once, the grace of a cancelled request, the
 * answer held until its children settle (structured concurrency), and the memory that drops
 * its handler's late reply.
 */
export class OwedAnswers<K, P, A> {
  private readonly table = new JobTable<K, P>();
  private readonly grace: GraceTimers<AnyOwedJob>;
  private readonly late: LateReplies<K>;

  constructor(
    private readonly protocol: OwedProtocol<K, P, A>,
    /** The grace period, or a grace shared with other tables (one timer for all): {@link sharedGrace}. */
    grace: number | GraceTimers<AnyOwedJob>,
    rememberLate: number,
  ) {
    this.grace = typeof grace === "number" ? sharedGrace(grace) : grace;
    this.late = new LateReplies(rememberLate);
  }

  /** Requests in flight; zero at quiescence. */
  get size(): number {
    return this.table.size;
  }

  get(key: K): OwedJob<P, A> | undefined {
    return this.table.get(key) as OwedJob<P, A> | undefined;
  }

  values(): IterableIterator<OwedJob<P, A>> {
    return this.table.values() as IterableIterator<OwedJob<P, A>>;
  }

  /** The running requests that pass `test`. */
  selectRunning(test: (job: OwedJob<P, A>) => boolean): OwedJob<P, A>[] {
    return this.table.selectRunning(test as (job: Job<P>) => boolean) as OwedJob<P, A>[];
  }

  /** A new request under `key`; undefined when the key is already in flight. */
  start(key: K, payload: P, parent: AnyJob | undefined): OwedJob<P, A> | undefined {
    if (this.table.has(key)) return undefined;
    const job = new OwedJob<P, A>(payload, parent, this);
    this.table.insert(key, job);
    return job;
  }

  /** @internal A cancel reached `job`. */
  reached(job: OwedJob<P, A>, origin: JobCancelOrigin): void {
    this.protocol.cancelled(job, origin);
  }

  /** A cancelled request waits for its handler's answer, at most the grace. */
  startGrace(job: OwedJob<P, A>): void {
    this.grace.start(job);
    jobObserver?.onEvent(job, "grace");
  }

  /** The grace passed (or is cut short): the subtree's owed requests are answered, deepest first. */
  endGrace(job: OwedJob<P, A>): void {
    if (job.isSettled) return;
    for (const child of [...job.children]) if (child instanceof OwedJob) child.owner.endGrace(child);
    // The grace bounds the whole subtree: children of other bindings still out do not hold it.
    this.answer(job, job.held ?? this.protocol.graceAnswer(job));
  }

  /** Answers `job` once its children have settled; until then the answer is held. */
  answerAfterChildren(job: OwedJob<P, A>, answer: A): void {
    if (job.isSettled) return;
    if (job.childCount > 0) job.held = answer;
    else this.answer(job, answer);
  }

  /** The single place a request gets its one answer; false when it already had one. */
  answer(job: OwedJob<P, A>, answer: A): boolean {
    const key = this.protocol.keyOf(job);
    if (job.isSettled || this.table.get(key) !== job) return false;
    const forPeer = this.protocol.forPeer(job);
    let failure: JobFailure | undefined;
    if (jobObserver !== undefined) {
      if (forPeer) jobObserver.onEvent(job, "synthetic-answer");
      failure = this.protocol.failureOf?.(answer);
    }
    this.table.delete(key);
    this.grace.stop(job);
    const outermost = releasing === undefined;
    if (outermost) releasing = [];
    try {
      settleJob(job, failure);
      if (forPeer) this.late.remember(key, job);
      this.protocol.send(job, answer, forPeer);
    } finally {
      if (outermost) {
        const released = releasing ?? [];
        releasing = undefined;
        for (const parent of released) parent.owner.answer(parent, parent.held);
      }
    }
    return true;
  }

  /** A reply to `key`, which is not in flight: true when it is a late one (answered for its peer), to drop. */
  dropLate(key: K): boolean {
    return this.late.take(key);
  }

  /** Every grace stops: nothing will end them now (the answers were given). */
  stopGraces(): void {
    this.grace.clear();
  }
}
