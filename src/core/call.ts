import { type CancelEffect, type CancelReason, JobCancelledError } from "./cancel-reason.js";
import { DEFAULT_GRACE_MS, GraceTimers } from "./grace-timers.js";
import { type AnyJob, Job, settleJob } from "./job.js";
import { LateReplies } from "./late-replies.js";
import { type JobCancelOrigin, type JobFailure, type JobInfo, jobObserver } from "./observer.js";
import { guarded, reportErrors } from "./report-errors.js";
import { checkTimerMs } from "./timer-limit.js";

// The one call lifecycle every binding uses: docs/decisions.md, "One call lifecycle".

/** What a call is linked to. */
export interface CallLinks {
  /** The job this call runs under (of any binding): cancelling it cancels the call. */
  readonly parent?: AnyJob | undefined;
  /** For plain code: aborting it cancels the call. */
  readonly signal?: AbortSignal | undefined;
  /** Milliseconds; when they pass the call is cancelled with reason `deadline`. */
  readonly timeoutMs?: number | undefined;
}

/** Which link cancelled a call: its parent's cascade, its signal, its deadline, or `Call.cancel`. */
export type CancelOrigin = Exclude<JobCancelOrigin, "self">;

/** The protocol's part of the lifecycle: all a binding supplies. */
export interface CallProtocol<P, R> {
  /** Sends the protocol's own cancel. Runs once, when the call is cancelled before it settled. */
  sendCancel?(call: Call<P, R>): void;
  /** The grace passed unanswered: settle the call. Without it there is no grace (`sendCancel` settles). */
  graceEnded?(call: Call<P, R>): void;
  /** The one cleanup closure: runs once, when the call settles, whatever settled it. */
  cleanup?(call: Call<P, R>): void;
  /** What the call is, for a job observer (tracing); asked only while one is installed. */
  describe?(call: Call<P, R>): JobInfo;
}

export interface CallsOptions {
  /** How long a cancelled call waits for its answer. Default {@link DEFAULT_GRACE_MS}. */
  graceMs?: number | undefined;
  /** How many settled keys to remember, to tell a late answer from an unknown one. Default none. */
  rememberSettled?: number;
}

/** Why a call under `links` is pointless before it starts (a doomed parent, an aborted signal), or undefined. */
export function doomedBy(links: CallLinks): CancelReason | undefined {
  if (links.signal?.aborted === true) return reasonOf(links.signal.reason);
  return links.parent?.isDoomed === true ? (links.parent.cause ?? "internal") : undefined;
}

/** The cancel reason an abort carries: a job's own, or `external` for a plain abort. */
export function reasonOf(abortReason: unknown): CancelReason {
  return abortReason instanceof JobCancelledError ? abortReason.reason : "external";
}

/** One binding's calls in flight, optionally keyed by the protocol's id, with one grace timer for all. */
export class Calls<P, R, K = unknown> {
  readonly graceMs: number;
  private readonly grace: GraceTimers<Call<P, R>>;
  private readonly live = new Map<unknown, Call<P, R>>();
  private readonly settledKeys: LateReplies<unknown>;

  constructor(options: CallsOptions = {}) {
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.grace = new GraceTimers(this.graceMs, (call) => call.endGrace());
    this.settledKeys = new LateReplies(options.rememberSettled ?? 0);
  }

  /** Calls not yet settled; zero at quiescence. */
  get size(): number {
    return this.live.size;
  }

  /** Starts a call under `key` (the call itself when none); undefined when `key` is in flight. */
  start(payload: P, links: CallLinks, protocol: CallProtocol<P, R>, key?: K): Call<P, R> | undefined {
    if (key !== undefined && this.live.has(key)) return undefined;
    if (links.timeoutMs !== undefined) checkTimerMs(links.timeoutMs, "timeoutMs");
    const call = new Call<P, R>(payload, links.parent, protocol, this.release, key);
    this.live.set(key === undefined ? call : key, call);
    if (key !== undefined) this.settledKeys.forget(key);
    if (jobObserver !== undefined && protocol.describe !== undefined) jobObserver.onStart(call.job, protocol.describe(call));
    call.arm(links, this.grace);
    return call;
  }

  get(key: K): Call<P, R> | undefined {
    return this.live.get(key);
  }

  /** True when `key` settled recently (within `rememberSettled` keys). */
  wasSettled(key: K): boolean {
    return this.settledKeys.has(key);
  }

  values(): IterableIterator<Call<P, R>> {
    return this.live.values();
  }

  /** Cancels every call in flight; returns how many it cancelled. */
  cancelAll(reason: CancelReason, match: (call: Call<P, R>) => boolean = () => true): number {
    let count = 0;
    for (const call of [...this.live.values()]) if (match(call) && call.cancel(reason) === "cancelled") count++;
    return count;
  }

  private readonly release = (call: Call<P, R>): void => {
    this.grace.stop(call);
    const key = call.key === undefined ? call : call.key;
    if (this.live.get(key) === call) this.live.delete(key);
    if (call.key !== undefined) this.settledKeys.remember(call.key);
  };
}

/** One call in flight. Its binding answers it with `resolve` or `reject`; both are no-ops once it settled. */
export class Call<P, R> {
  readonly job: Job<P>;
  readonly promise: Promise<R>;
  /** Which link cancelled the call; undefined while it was not. */
  origin: CancelOrigin | undefined = undefined;
  private done = false;
  private fulfil!: (value: R) => void;
  private fail!: (error: unknown) => void;
  private grace: GraceTimers<Call<P, R>> | undefined = undefined;
  private unlink: (() => void) | undefined = undefined;
  private stopHook: (() => boolean) | undefined = undefined;

  constructor(
    payload: P,
    parent: AnyJob | undefined,
    private readonly protocol: CallProtocol<P, R>,
    private readonly release: (call: Call<P, R>) => void,
    /** The protocol's id of the call, when it has one. */
    readonly key: unknown = undefined,
  ) {
    this.job = new Job(payload, parent);
    this.promise = new Promise<R>((resolve, reject) => {
      this.fulfil = resolve;
      this.fail = reject;
    });
  }

  get payload(): P {
    return this.job.payload;
  }

  get settled(): boolean {
    return this.done;
  }

  /** Why the call (or the nearest cancelled job above it) was cancelled. */
  get cause(): CancelReason | undefined {
    return this.job.cause;
  }

  /** Cancels the call (and anything started under its job). */
  cancel(reason: CancelReason): CancelEffect {
    return this.cancelBy("call", reason);
  }

  /** Settles with `value`; false when the call had already settled (a late answer, dropped). */
  resolve(value: R): boolean {
    return this.settle(undefined, () => this.fulfil(value)) || this.dropped();
  }

  /** Settles with `error`; false when the call had already settled. */
  reject(error: unknown): boolean {
    return this.settle(jobObserver === undefined ? undefined : failureOf(error), () => this.fail(error)) || this.dropped();
  }

  /** Ends the grace now (a shutdown does not wait for answers): settles as the grace's end would. */
  endGrace(): void {
    if (this.done) return;
    jobObserver?.onEvent(this.job, "synthetic-answer");
    const errors: unknown[] = [];
    // Even when graceEnded throws, the call settles; the throw is reported, not thrown.
    if (this.protocol.graceEnded !== undefined) guarded(() => this.protocol.graceEnded?.(this), errors);
    if (!this.done) this.reject(new JobCancelledError(this.cause ?? "internal"));
    reportErrors(errors, "ending a grace");
  }

  /** @internal Links the call; `Calls.start` runs it once the call is in its table. */
  arm(links: CallLinks, grace: GraceTimers<Call<P, R>>): void {
    this.grace = grace;
    const { signal, timeoutMs } = links;
    this.stopHook = this.job.onCancel(this.cancelled);
    if (signal !== undefined) {
      const onAbort = () => this.cancelBy("signal", reasonOf(signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      this.unlink = () => signal.removeEventListener("abort", onAbort);
    }
    if (timeoutMs !== undefined) this.job.setDeadline(timeoutMs, () => this.cancelBy("deadline", "deadline"));
    const doomed = doomedBy(links);
    if (doomed !== undefined) this.cancelBy(signal?.aborted === true ? "signal" : "parent", doomed);
  }

  /** Cancels the job, remembering which link did when it is the first. */
  private cancelBy(origin: CancelOrigin, reason: CancelReason): CancelEffect {
    if (this.job.state === "running") this.origin ??= origin;
    return this.job.cancel(reason, origin);
  }

  private readonly cancelled = (): void => {
    if (this.done) return;
    this.origin ??= "parent";
    try {
      this.protocol.sendCancel?.(this);
    } finally {
      // A throwing sendCancel still gets its grace, so the call settles; the cascade reports the throw.
      if (!this.done && this.protocol.graceEnded !== undefined) {
        this.grace?.start(this);
        jobObserver?.onEvent(this.job, "grace");
      }
    }
  };

  /** An answer after the call settled: dropped (an event when the call had been cancelled). */
  private dropped(): false {
    if (this.job.reason !== undefined) jobObserver?.onEvent(this.job, "late-reply-dropped");
    return false;
  }

  /** Settles once; the promise is answered first, so no throwing hook can leave it pending. */
  private settle(failure: JobFailure | undefined, answer: () => void): boolean {
    if (this.done) return false;
    this.done = true;
    answer();
    this.release(this);
    this.stopHook?.();
    this.unlink?.();
    const errors: unknown[] = [];
    settleCallJob(this.job, failure, errors);
    if (this.protocol.cleanup !== undefined) guarded(() => this.protocol.cleanup?.(this), errors);
    reportErrors(errors, "settling a call");
    return true;
  }
}

/** Settles a call's job (either side's); what errors it reports go to `errors`. */
export function settleCallJob(job: AnyJob, failure: JobFailure | undefined, errors: unknown[]): void {
  guarded(() => settleJob(job, failure), errors);
  // Structured concurrency: work started under a call does not outlive it unreachable.
  for (const child of [...job.children]) if (child.isRunning) guarded(() => child.cancel("internal", "parent"), errors);
}

/** What an observer is told of a rejected call: the error's code (or name) and message. */
function failureOf(error: unknown): JobFailure {
  if (typeof error !== "object" || error === null) return { code: "error", message: String(error) };
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  const known = typeof code === "string" || typeof code === "number" ? code : typeof name === "string" ? name : "error";
  return { code: known, message: typeof message === "string" ? message : undefined };
}
