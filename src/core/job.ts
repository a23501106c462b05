import { type CancelEffect, type CancelReason, JobCancelledError } from "./cancel-reason.js";
import { type JobCancelOrigin, type JobFailure, jobObserver } from "./observer.js";
import { guarded, reportErrors } from "./report-errors.js";
import { checkTimerMs } from "./timer-limit.js";

export type JobState = "running" | "cancelling" | "settled";

/**
 * Called once for each job a cancel reaches, deepest first. A subtree can hold jobs of other
 * bindings (an ACP turn's RAP call, say), so a visitor checks the payload is one of its own.
 */
export type CancelVisitor = (job: AnyJob) => void;

/** A job of any binding: the type of a parent or child across bindings. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJob = Job<any>;

/**
 * One unit of work in flight: a request, a call, a task. Jobs form a tree; cancelling a
 * job cancels its subtree, children before parents, and each job settles exactly once.
 *
 * Kept deliberately small: no AbortController, child set, hook list or timer exists until
 * someone needs it, because a busy connection holds thousands of these.
 *
 * The seam between bindings: a binding that starts work under another binding's job passes
 * that job as `parent`, reacts to its own job's cancel (`onCancel`, or the `signal` for plain
 * libraries) by sending its protocol's cancel, and calls `settle()` once its work has an
 * answer (or its grace has passed). `startCall` (call.ts) does all of that for a call.
 */
export class Job<P = unknown> {
  state: JobState = "running";
  /** Why this job was cancelled; undefined while it was not. See `cause` for the inherited why. */
  reason: CancelReason | undefined = undefined;
  /** The job this one was started under; it may belong to another binding. */
  readonly parent: AnyJob | undefined;
  private childSet: Set<AnyJob> | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private hooks: (() => void)[] | undefined = undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  /**
   * Called when the last attached child settles, with that child. A binding that holds this
   * job's answer until its children (of any binding) are done sets it; children settle
   * through their own bindings, so this is how the holder learns the wait is over.
   */
  onChildrenSettled: ((lastChild: AnyJob) => void) | undefined = undefined;

  constructor(
    readonly payload: P,
    parent?: AnyJob,
  ) {
    this.parent = parent;
    if (parent !== undefined && parent.state !== "settled") {
      parent.childSet ??= new Set();
      parent.childSet.add(this);
    }
  }

  /** True while the job can still be cancelled. */
  get isRunning(): boolean {
    return this.state === "running";
  }

  get isSettled(): boolean {
    return this.state === "settled";
  }

  /** True when this job or any ancestor is cancelling: new work under it is pointless. */
  get isDoomed(): boolean {
    return this.state === "cancelling" || (this.parent?.isDoomed ?? false);
  }

  /**
   * Why the nearest cancelled job on the way to the root (this one first) was cancelled, as
   * Go's `context.Cause`; undefined when none was. A job born under a cancelling grandparent
   * has no reason of its own and a parent without one: its cause is the grandparent's.
   */
  get cause(): CancelReason | undefined {
    if (this.reason !== undefined) return this.reason;
    for (let at = this.parent; at !== undefined; at = at.parent) {
      if (at.reason !== undefined) return at.reason;
    }
    return undefined;
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
      if (this.state !== "running" && this.reason !== undefined) {
        this.controller.abort(new JobCancelledError(this.reason));
      }
    }
    return this.controller.signal;
  }

  /**
   * Runs `hook` once when this job is cancelled (as Go's `context.AfterFunc`): during the
   * cascade, after the job's children, before its signal aborts. A job already cancelling runs
   * it now; a settled job never does. Returns `stop`, true when it kept the hook from running.
   */
  onCancel(hook: () => void): () => boolean {
    if (this.state === "settled") return never;
    if (this.state === "cancelling") {
      hook();
      return never;
    }
    (this.hooks ??= []).push(hook);
    return () => {
      const hooks = this.hooks;
      const at = hooks === undefined ? -1 : hooks.indexOf(hook);
      if (at === -1 || hooks === undefined) return false;
      hooks.splice(at, 1);
      return true;
    };
  }

  /**
   * Cancels this job and its subtree. The job is marked before its children are
   * visited, so anything born under it during the cascade is already doomed. `origin` says
   * where the cancel came from, for an observer; the cascade passes `parent` to children.
   */
  cancel(reason: CancelReason, visit?: CancelVisitor, origin: JobCancelOrigin = "self"): CancelEffect {
    if (this.state === "settled") return "already-settled";
    if (this.state === "cancelling") return "already-cancelled";
    this.state = "cancelling";
    this.reason = reason;
    if (this.deadlineTimer !== undefined) this.clearDeadline();
    jobObserver?.onCancel(this, reason, origin);
    // A throwing hook or visitor must not stop the cascade: every child and hook still runs,
    // the signal still aborts, and the errors are reported afterwards (report-errors.ts).
    const errors: unknown[] = [];
    const children = this.childSet;
    if (children !== undefined && children.size !== 0) {
      for (const child of [...children]) guarded(() => child.cancel(reason, visit, "parent"), errors);
    }
    const hooks = this.hooks;
    if (hooks !== undefined) {
      this.hooks = undefined;
      for (const hook of hooks) guarded(hook, errors);
    }
    if (this.controller !== undefined) this.controller.abort(new JobCancelledError(reason));
    if (visit !== undefined) guarded(() => visit(this), errors);
    reportErrors(errors, "cancelling a job");
    return "cancelled";
  }

  /**
   * Marks the job done. Returns false when it was already settled: the caller must not answer
   * twice. `failure` tells an observer the answer was an error.
   */
  settle(failure?: JobFailure): boolean {
    if (this.state === "settled") return false;
    this.state = "settled";
    jobObserver?.onSettle(this, failure);
    this.hooks = undefined;
    if (this.deadlineTimer !== undefined) this.clearDeadline();
    const siblings = this.parent?.childSet;
    if (siblings !== undefined && siblings.delete(this) && siblings.size === 0) this.parent?.onChildrenSettled?.(this);
    return true;
  }

  /** Arms (or re-arms) a deadline; `onExpire` decides what expiry means. RangeError above 2^31-1 ms. */
  setDeadline(ms: number, onExpire: (job: Job<P>) => void): void {
    checkTimerMs(ms, "a deadline");
    this.clearDeadline();
    if (this.state !== "running") return;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = undefined;
      if (this.state === "running") onExpire(this);
    }, ms);
    this.deadlineTimer.unref?.();
  }

  get hasDeadline(): boolean {
    return this.deadlineTimer !== undefined;
  }

  private clearDeadline(): void {
    if (this.deadlineTimer !== undefined) {
      clearTimeout(this.deadlineTimer);
      this.deadlineTimer = undefined;
    }
  }
}

const EMPTY: ReadonlySet<never> = new Set();
const never = (): boolean => false;
