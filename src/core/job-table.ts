import type { CancelEffect, CancelReason } from "./cancel-reason.js";
import { type AnyJob, type CancelVisitor, Job } from "./job.js";
import type { JobFailure } from "./observer.js";

/**
 * Jobs in flight keyed by the id their issuer gave them. One table per direction, so a key
 * can only ever name the issuer's own work. A plain Map: an ACP connection holds a few
 * requests in flight, never the 100,000 an index tuned for them would pay off at.
 */
export class JobTable<K, P> {
  private readonly jobs = new Map<K, Job<P>>();

  get size(): number {
    return this.jobs.size;
  }

  has(key: K): boolean {
    return this.jobs.has(key);
  }

  get(key: K): Job<P> | undefined {
    return this.jobs.get(key);
  }

  /** The in-flight jobs, in the order they were created (live: copy it to settle as you go). */
  values(): IterableIterator<Job<P>> {
    return this.jobs.values();
  }

  /** The running jobs that pass `test` (a session's cancel looks for its own among all). */
  selectRunning(test: (job: Job<P>) => boolean): Job<P>[] {
    const found: Job<P>[] = [];
    for (const job of this.jobs.values()) if (job.state === "running" && test(job)) found.push(job);
    return found;
  }

  /** Creates a job under `key`; undefined when the key is already in flight. */
  create(key: K, payload: P, parent?: AnyJob): Job<P> | undefined {
    if (this.jobs.has(key)) return undefined;
    const job = new Job(payload, parent);
    this.jobs.set(key, job);
    return job;
  }

  /** Settles and removes the job under `key`; undefined if none was in flight. */
  settle(key: K, failure?: JobFailure): Job<P> | undefined {
    const job = this.jobs.get(key);
    if (job === undefined) return undefined;
    this.jobs.delete(key);
    job.settle(failure);
    return job;
  }

  /** Idempotent cancel by key, reporting what it did. */
  cancel(key: K, reason: CancelReason, visit?: CancelVisitor): CancelEffect {
    const job = this.jobs.get(key);
    return job === undefined ? "not-found" : job.cancel(reason, visit);
  }

  /** Forgets everything (used at close, after every job was answered). */
  clear(): void {
    this.jobs.clear();
  }
}
