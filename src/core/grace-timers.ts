import { SharedTimer } from "./shared-timer.js";

/**
 * Grace periods with one timer for all of them. Every period has the same length, so they
 * end in the order they started: a Map (which keeps insertion order) and one timer for its
 * first entry replace a timer per item. 10,000 cancels, one timer.
 */
export class GraceTimers<T> {
  private readonly due = new Map<T, number>();
  private readonly timer = new SharedTimer(() => this.fire());

  constructor(
    private readonly graceMs: number,
    private readonly expire: (item: T) => void,
  ) {}

  get size(): number {
    return this.due.size;
  }

  /** Starts `item`'s grace period now (a second start keeps the first deadline). */
  start(item: T): void {
    if (this.due.has(item)) return;
    this.due.set(item, Date.now() + this.graceMs);
    if (!this.timer.armed) this.timer.arm(this.graceMs);
  }

  /** `item` no longer needs its grace period. */
  stop(item: T): void {
    if (!this.due.delete(item) || this.due.size > 0) return;
    // Nothing left to wait for: no timer outlives the work.
    this.timer.clear();
  }

  private fire(): void {
    const now = Date.now();
    for (const [item, due] of this.due) {
      if (due > now) {
        if (!this.timer.armed) this.timer.arm(due - now);
        return;
      }
      this.due.delete(item);
      this.expire(item);
    }
  }
}
