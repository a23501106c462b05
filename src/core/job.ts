import { type CancelEffect, type CancelReason, JobCancelledError } from "./cancel-reason.js";

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
 * Kept deliberately small: no AbortController, child set or timer exists until someone
 * needs it, because a busy connection holds thousands of these.
 *
 * The seam between bindings: a binding that starts work under another binding's job passes
 * that job as `parent`, watches its own job's `signal` to send its protocol's cancel, and
 * calls `settle()` once its work has an answer (or its grace has passed).
 */
export class Job<P = unknown> {
  state: JobState = "running";
  reason: CancelReason | undefined = undefined;
  /** The job this one was started under; it may belong to another binding. */
  readonly parent: AnyJob | undefined;
  private childSet: Set<AnyJob> | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  /**
   * Called when the last attached child settles, with that child. A binding that holds this
   * job's answer until its children (of any binding) are done sets it; children settle
   * through their own bindings, so this is how the holder learns the wait is over.
   */
  onChildrenSettled: ((lastChild: AnyJob) => void) | undefined = undefined;
  /** The ticket of this job's grace period in a `JobGrace` queue; 0 while it has none. */
  graceTicket = 0;

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
   * Cancels this job and its subtree. The job is marked before its children are
   * visited, so anything born under it during the cascade is already doomed.
   */
  cancel(reason: CancelReason, visit?: CancelVisitor): CancelEffect {
    if (this.state === "settled") return "already-settled";
    if (this.state === "cancelling") return "already-cancelled";
    this.state = "cancelling";
    this.reason = reason;
    // The field tests inline what the helpers do: a cascade runs this once per job, mostly
    // before V8 has optimised it, where every call and getter is paid in full.
    if (this.deadlineTimer !== undefined) this.clearDeadline();
    const children = this.childSet;
    if (children !== undefined && children.size !== 0) {
      for (const child of [...children]) child.cancel(reason, visit);
    }
    if (this.controller !== undefined) this.controller.abort(new JobCancelledError(reason));
    if (visit !== undefined) visit(this);
    return "cancelled";
  }

  /** Marks the job done. Returns false when it was already settled: the caller must not answer twice. */
  settle(): boolean {
    if (this.state === "settled") return false;
    this.state = "settled";
    if (this.deadlineTimer !== undefined) this.clearDeadline();
    const siblings = this.parent?.childSet;
    if (siblings !== undefined && siblings.delete(this) && siblings.size === 0) this.parent?.onChildrenSettled?.(this);
    return true;
  }

  /** Arms (or re-arms) a deadline; `onExpire` decides what expiry means. */
  setDeadline(ms: number, onExpire: (job: Job<P>) => void): void {
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
