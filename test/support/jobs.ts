import { type AnyJob, type CancelEffect, type CancelReason, Job, JobTable, settleJob } from "../../src/core/index.js";
import type { JobOwner } from "../../src/core/job.js";
import type { JobFailure } from "../../src/core/observer.js";

// What tests need of jobs beyond what src offers its users: settling a job by hand, watching a
// cascade reach each job, a table that makes its own jobs. src keeps none of these.

export const settle = (job: AnyJob, failure?: JobFailure): boolean => settleJob(job, failure);

/** True while `job` has a deadline armed (read from its private timer). */
export const hasDeadline = (job: AnyJob): boolean => Reflect.get(job, "deadlineTimer") !== undefined;

/** The items whose grace period runs in `grace` (a `GraceTimers`; read from its private Map). */
export const inGrace = (grace: object): Map<unknown, number> => Reflect.get(grace, "due") as Map<unknown, number>;

/** How many of `calls`' cancelled calls wait out their grace (read from its private timers). */
export const graceCount = (calls: object): number => inGrace(Reflect.get(calls, "grace") as object).size;

/** Cancels `root`, calling `visit` for each job of its subtree the cancel reaches, deepest first. */
export function cancelVisiting<P>(root: Job<P>, reason: CancelReason, visit: (job: Job<P>) => void): CancelEffect {
  const watch = (job: AnyJob): void => {
    if (!job.isRunning) return;
    job.onCancel(() => visit(job as Job<P>));
    for (const child of job.children) watch(child);
  };
  watch(root);
  return root.cancel(reason);
}

/** Tells a {@link WaitingJob} its last child settled (what a `ServerCalls` table hears to answer after the children). */
const WAITING: JobOwner = {
  cancelReached: () => {},
  lastChildSettled: (job, last) => (job as WaitingJob).onLast?.(last),
};

/** A job that reports when its last child settles. */
export class WaitingJob<P = unknown> extends Job<P> {
  onLast: ((last: AnyJob) => void) | undefined = undefined;
  constructor(payload: P, parent?: AnyJob) {
    super(payload, parent, WAITING);
  }
}

/** A JobTable that makes its jobs, settles and cancels them by key, and forgets everything. */
export class TestTable<K, P> extends JobTable<K, P> {
  private readonly keys = new Set<K>();

  create(key: K, payload: P, parent?: AnyJob): Job<P> | undefined {
    if (this.has(key)) return undefined;
    const job = new Job(payload, parent);
    this.insert(key, job);
    this.keys.add(key);
    return job;
  }

  settle(key: K, failure?: JobFailure): Job<P> | undefined {
    const job = this.delete(key);
    this.keys.delete(key);
    if (job !== undefined) settleJob(job, failure);
    return job;
  }

  cancel(key: K, reason: CancelReason, visit?: (job: Job<P>) => void): CancelEffect {
    const job = this.get(key);
    if (job === undefined) return "not-found";
    return visit === undefined ? job.cancel(reason) : cancelVisiting(job, reason, visit);
  }

  clear(): void {
    for (const key of this.keys) this.delete(key);
    this.keys.clear();
  }
}
