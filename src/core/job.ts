import { type CancelEffect, type CancelReason, JobCancelledError } from "./cancel-reason.js";
import { type JobCancelOrigin, type JobFailure, jobObserver } from "./observer.js";
import { guarded, reportErrors } from "./report-errors.js";
import { checkTimerMs } from "./timer-limit.js";

export type JobState = "running" | "cancelling" | "settled";

/** A job of any binding: the type of a parent or child across bindings. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJob = Job<any>;

/** What the table owning a job hears (one object per table, nothing per job): a lifecycle's seam, not a user's. */
export interface JobOwner {
  /** A cancel reached `job`, after its subtree and hooks (deepest first). */
  cancelReached(job: AnyJob, origin: JobCancelOrigin): void;
  /** The last attached child of `job` (of any binding) settled. */
  lastChildSettled(job: AnyJob, last: AnyJob): void;
}

/**
 * One unit of work in flight. Cancelling a job cancels its subtree, children before parents;
 * each job settles exactly once. Controller, child set, hooks and timer are made lazily: a
 * busy connection holds thousands of jobs.
 */
export class Job<P = unknown> {
  private current: JobState = "running";
  private why: CancelReason | undefined = undefined;
  private childSet: Set<AnyJob> | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private hooks: (() => void)[] | undefined = undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined = undefined;

  /** `parent`: the job this one was started under, of any binding. */
  constructor(
    readonly payload: P,
    readonly parent: AnyJob | undefined = undefined,
    /** @internal The lifecycle that owns the job. */
    private readonly owner: JobOwner | undefined = undefined,
  ) {
    if (parent !== undefined && parent.state !== "settled") {
      parent.childSet ??= new Set();
      parent.childSet.add(this);
    }
  }

  /** Running, then cancelling (once cancelled), then settled; only core moves it on. */
  get state(): JobState {
    return this.current;
  }

  /** Why this job was cancelled; undefined while it was not. See `cause` for the inherited why. */
  get reason(): CancelReason | undefined {
    return this.why;
  }

  /** True while the job can still be cancelled. */
  get isRunning(): boolean {
    return this.current === "running";
  }

  get isSettled(): boolean {
    return this.current === "settled";
  }

  /** True when this job or any ancestor is cancelling: new work under it is pointless. */
  get isDoomed(): boolean {
    return this.current === "cancelling" || (this.parent?.isDoomed ?? false);
  }

  /** Why the nearest cancelled job from here to the root was cancelled (Go's `context.Cause`). */
  get cause(): CancelReason | undefined {
    let at: AnyJob | undefined = this.parent;
    while (at !== undefined && at.reason === undefined) at = at.parent;
    return this.why ?? at?.reason;
  }

  /** Children still attached (not settled), of any binding. */
  get children(): ReadonlySet<AnyJob> {
    return this.childSet ?? EMPTY;
  }

  get childCount(): number {
    return this.childSet?.size ?? 0;
  }

  /** An AbortSignal for this job, created on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.current !== "running" && this.reason !== undefined) {
        this.controller.abort(new JobCancelledError(this.reason));
      }
    }
    return this.controller.signal;
  }

  /**
   * Runs `hook` once when this job is cancelled (Go's `context.AfterFunc`), after its children and
   * before its signal aborts; at once when already cancelling. `stop` returns true if it kept it from running.
   */
  onCancel(hook: () => void): () => boolean {
    if (this.current === "settled") return never;
    if (this.current === "cancelling") {
      hook();
      return never;
    }
    (this.hooks ??= []).push(hook);
    return () => {
      const at = this.hooks?.indexOf(hook) ?? -1;
      if (at !== -1) this.hooks?.splice(at, 1);
      return at !== -1;
    };
  }

  /** Cancels this job and its subtree; marked first, so work born during the cascade is doomed. */
  cancel(reason: CancelReason, origin: JobCancelOrigin = "self"): CancelEffect {
    if (this.current === "settled") return "already-settled";
    if (this.current === "cancelling") return "already-cancelled";
    this.current = "cancelling";
    this.why = reason;
    this.clearDeadline();
    jobObserver?.onCancel(this, reason, origin);
    // A throw must not stop the cascade: it is reported afterwards (report-errors.ts).
    const errors: unknown[] = [];
    if (this.childSet?.size) for (const child of [...this.childSet]) guarded(() => child.cancel(reason, "parent"), errors);
    const hooks = this.hooks;
    if (hooks !== undefined) {
      this.hooks = undefined;
      for (const hook of hooks) guarded(hook, errors);
    }
    if (this.controller !== undefined) this.controller.abort(new JobCancelledError(reason));
    if (this.owner !== undefined) guarded(() => this.owner?.cancelReached(this, origin), errors);
    reportErrors(errors, "cancelling a job");
    return "cancelled";
  }

  /** Marks the job done (only through {@link settleJob}); false when it already was. */
  private settleOnce(failure: JobFailure | undefined): boolean {
    if (this.current === "settled") return false;
    this.current = "settled";
    jobObserver?.onSettle(this, failure);
    this.hooks = undefined;
    this.clearDeadline();
    const parent = this.parent;
    const siblings = parent?.childSet;
    if (siblings !== undefined && siblings.delete(this) && siblings.size === 0) parent?.owner?.lastChildSettled(parent, this);
    return true;
  }

  /** Arms (or re-arms) a deadline; `onExpire` decides what expiry means. RangeError above 2^31-1 ms. */
  setDeadline(ms: number, onExpire: (job: Job<P>) => void): void {
    checkTimerMs(ms, "a deadline");
    this.clearDeadline();
    if (this.current !== "running") return;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = undefined;
      if (this.current === "running") onExpire(this);
    }, ms);
    this.deadlineTimer.unref?.();
  }

  private clearDeadline(): void {
    if (this.deadlineTimer === undefined) return; // most jobs never had one: no call per settle
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }
}

/**
 * Marks `job` done; false when it already was (the caller must not answer twice). For the
 * lifecycle that owns the job: a user holding a job can cancel it, never settle it.
 */
export function settleJob(job: AnyJob, failure?: JobFailure): boolean {
  return job["settleOnce"](failure);
}

/** The table that owns `job`, if any: for the lifecycles in core, never a user. */
export function jobOwner(job: AnyJob): JobOwner | undefined {
  return job["owner"];
}

const EMPTY: ReadonlySet<never> = new Set();
const never = (): boolean => false;
