import { type CancelEffect, type CancelReason, JobCancelledError } from "./cancel-reason.js";

export type JobState = "running" | "cancelling" | "settled";

/** Called once for each job a cancel reaches, deepest first. */
export type CancelVisitor<P> = (job: Job<P>) => void;

/**
 * One unit of work in flight: a request, a call, a task. Jobs form a tree; cancelling a
 * job cancels its subtree, children before parents, and each job settles exactly once.
 *
 * Kept deliberately small: no AbortController, child set or timer exists until someone
 * needs it, because a busy connection holds thousands of these.
 */
export class Job<P = unknown> {
  state: JobState = "running";
  reason: CancelReason | undefined = undefined;
  readonly parent: Job<P> | undefined;
  private childSet: Set<Job<P>> | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    readonly payload: P,
    parent?: Job<P>,
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

  /** Children still attached (not settled). */
  get children(): ReadonlySet<Job<P>> {
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
  cancel(reason: CancelReason, visit?: CancelVisitor<P>): CancelEffect {
    if (this.state === "settled") return "already-settled";
    if (this.state === "cancelling") return "already-cancelled";
    this.state = "cancelling";
    this.reason = reason;
    this.clearDeadline();
    if (this.childSet !== undefined) {
      for (const child of [...this.childSet]) child.cancel(reason, visit);
    }
    this.controller?.abort(new JobCancelledError(reason));
    visit?.(this);
    return "cancelled";
  }

  /** Marks the job done. Returns false when it was already settled: the caller must not answer twice. */
  settle(): boolean {
    if (this.state === "settled") return false;
    this.state = "settled";
    this.clearDeadline();
    this.parent?.childSet?.delete(this);
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
