import type { AnyJob } from "./job.js";
import { jobObserver } from "./observer.js";
import { RecentKeys } from "./recent-keys.js";

/**
 * Settled keys (bounded), so that a reply to a key already answered is dropped as late, not taken for an
 * unknown one. Their jobs are kept only while an observer is installed, to tell it of the drop.
 */
export class LateReplies<K> {
  private readonly keys: RecentKeys<K>;
  private readonly traced = new Map<K, AnyJob>();

  constructor(
    private readonly capacity: number,
    windowMs?: number,
  ) {
    this.keys = new RecentKeys(capacity, windowMs);
  }

  get size(): number {
    return this.keys.size;
  }

  remember(key: K, job?: AnyJob): void {
    this.keys.add(key);
    if (jobObserver === undefined || job === undefined || this.capacity <= 0) return;
    this.traced.set(key, job);
    if (this.traced.size > this.capacity) this.traced.delete(this.traced.keys().next().value as K);
  }

  has(key: K): boolean {
    return this.keys.has(key);
  }

  /** `key` is in flight again: a reply to it is no longer late. */
  forget(key: K): void {
    this.keys.delete(key);
    this.traced.delete(key);
  }

  /** A reply to `key` arrived: true (and the key forgotten) when it is a late one, to drop. */
  take(key: K): boolean {
    if (!this.keys.delete(key)) return false;
    const job = this.traced.get(key);
    if (job !== undefined) {
      this.traced.delete(key);
      jobObserver?.onEvent(job, "late-reply-dropped");
    }
    return true;
  }
}
