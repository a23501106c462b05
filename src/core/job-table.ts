import type { CancelEffect, CancelReason } from "./cancel-reason.js";
import { type AnyJob, type CancelVisitor, Job } from "./job.js";
import { RecentKeys } from "./recent-keys.js";

export interface JobTableOptions {
  /** How many settled keys to remember for `already-settled` answers. */
  rememberSettled?: number;
}

/**
 * Jobs in flight keyed by the id their issuer gave them. One table per direction, so
 * a key can only ever name the issuer's own work.
 */
export class JobTable<K, P> {
  private readonly jobs = new Map<K, Job<P>>();
  private readonly settledKeys: RecentKeys<K>;

  constructor(options: JobTableOptions = {}) {
    this.settledKeys = new RecentKeys(options.rememberSettled ?? 256);
  }

  get size(): number {
    return this.jobs.size;
  }

  has(key: K): boolean {
    return this.jobs.has(key);
  }

  get(key: K): Job<P> | undefined {
    return this.jobs.get(key);
  }

  values(): IterableIterator<Job<P>> {
    return this.jobs.values();
  }

  /** Creates a job under `key`; undefined when the key is already in flight. */
  create(key: K, payload: P, parent?: AnyJob): Job<P> | undefined {
    if (this.jobs.has(key)) return undefined;
    const job = new Job(payload, parent);
    this.jobs.set(key, job);
    this.settledKeys.delete(key);
    return job;
  }

  /** Settles and removes the job under `key`; undefined if none was in flight. */
  settle(key: K): Job<P> | undefined {
    const job = this.jobs.get(key);
    if (job === undefined) return undefined;
    this.jobs.delete(key);
    job.settle();
    this.settledKeys.add(key);
    return job;
  }

  /** Idempotent cancel by key, reporting what it did. */
  cancel(key: K, reason: CancelReason, visit?: CancelVisitor): CancelEffect {
    const job = this.jobs.get(key);
    if (job === undefined) return this.settledKeys.has(key) ? "already-settled" : "not-found";
    return job.cancel(reason, visit);
  }

  /** Forgets everything (used at close, after every job was answered). */
  clear(): void {
    this.jobs.clear();
    this.settledKeys.clear();
  }
}
