import type { AnyJob } from "./job.js";
import { SharedTimer } from "./shared-timer.js";

/** Past this many passed-over entries the queue drops them in one go. */
const COMPACT_AT = 1024;

/**
 * Grace periods for jobs: one timer for all of them, like `GraceTimers`, and no table.
 * Every period has the same length, so they end in the order they started: a queue in
 * start order says which ends first, and each job carries the ticket of its entry
 * (`Job.graceTicket`), so that stopping a job is one field write. `GraceTimers` keeps a
 * Map entry per item instead: a cascade of 1,000 jobs costs 1,000 Map insertions and
 * deletions there, 1,000 array pushes here.
 *
 * A stopped job's entry stays in the queue, dead (its ticket no longer the job's), until the
 * timer passes it or the last period stops, which empties the queue.
 */
export class JobGrace<J extends AnyJob> {
  private jobs: J[] = [];
  private tickets: number[] = [];
  private dues: number[] = [];
  private head = 0;
  private pending = 0;
  private lastTicket = 0;
  private readonly timer = new SharedTimer(() => this.fire());

  constructor(
    private readonly graceMs: number,
    private readonly expire: (job: J) => void,
  ) {}

  get size(): number {
    return this.pending;
  }

  /**
   * Starts `job`'s grace period (a second start keeps the first deadline). A caller that
   * starts many at once (a cascade) reads the clock once and passes it as `startedAt`.
   */
  start(job: J, startedAt: number = Date.now()): void {
    if (job.graceTicket !== 0) return;
    // Small integers; 0 means "no period". Wrapping is harmless: a ticket only has to differ
    // from the job's earlier ones still queued, and those are at most a period old.
    const ticket = (this.lastTicket = this.lastTicket >= 0x3fffffff ? 1 : this.lastTicket + 1);
    const due = startedAt + this.graceMs;
    job.graceTicket = ticket;
    this.jobs.push(job);
    this.tickets.push(ticket);
    this.dues.push(due);
    this.pending++;
    if (!this.timer.armed) this.timer.arm(due - Date.now());
  }

  /** `job` no longer needs its grace period. */
  stop(job: J): void {
    if (job.graceTicket === 0) return;
    job.graceTicket = 0;
    if (--this.pending > 0) return;
    // Nothing left to wait for: no timer outlives the work, and no dead entry holds a job.
    this.timer.clear();
    this.empty();
  }

  private fire(): void {
    const now = Date.now();
    // `expire` may start and stop periods: the loop reads the queue afresh at every step.
    while (this.head < this.jobs.length) {
      const at = this.head;
      const job = this.jobs[at] as J;
      if (job.graceTicket !== this.tickets[at]) {
        this.head++;
        continue;
      }
      const due = this.dues[at] as number;
      if (due > now) {
        if (!this.timer.armed) this.timer.arm(due - now);
        this.compact();
        return;
      }
      this.head++;
      job.graceTicket = 0;
      this.pending--;
      this.expire(job);
    }
    this.empty();
  }

  private compact(): void {
    if (this.head < COMPACT_AT) return;
    this.jobs.splice(0, this.head);
    this.tickets.splice(0, this.head);
    this.dues.splice(0, this.head);
    this.head = 0;
  }

  private empty(): void {
    this.jobs.length = 0;
    this.tickets.length = 0;
    this.dues.length = 0;
    this.head = 0;
  }
}
