import type { RequestJob } from "./request-record.js";

/**
 * Grace periods of cancelled jobs, with one timer for all of them. Every grace period has
 * the same length, so jobs expire in the order they were cancelled: a FIFO and a timer for
 * its head replace a timer per job (10,000 cancels, one timer).
 */
export class GraceQueue {
  private queue: RequestJob[] = [];
  private head = 0;
  private live = 0;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    private readonly graceMs: number,
    private readonly expire: (job: RequestJob) => void,
  ) {}

  /** Starts `job`'s grace period now. */
  start(job: RequestJob): void {
    job.payload.graceDue = Date.now() + this.graceMs;
    this.queue.push(job);
    this.live++;
    if (this.timer === undefined) this.arm(this.graceMs);
  }

  /** `job` was answered: its grace period no longer matters. */
  stop(job: RequestJob): void {
    if (job.payload.graceDue === undefined) return;
    job.payload.graceDue = undefined;
    if (--this.live > 0) return;
    // Nothing left to wait for: no timer should outlive the work.
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    this.head = 0;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(0, ms));
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    const now = Date.now();
    while (this.head < this.queue.length) {
      const job = this.queue[this.head] as RequestJob;
      const due = job.payload.graceDue;
      if (due !== undefined && due > now) break;
      this.head++;
      if (due !== undefined) this.expire(job); // answers it, which stops its grace period
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const next = this.queue[this.head];
    if (next !== undefined && this.timer === undefined) this.arm((next.payload.graceDue ?? now) - now);
  }
}
