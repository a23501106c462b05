import { reportErrors } from "./report-errors.js";
import { checkTimerMs } from "./timer-limit.js";

/** How long a cancelled call may stay unanswered before its binding answers for it: every binding's default. */
export const DEFAULT_GRACE_MS = 2000;

/**
 * The one grace mechanism: periods of equal length end in the order they started, so a Map
 * (insertion order) and one unref'd timer for its first entry replace a timer per item.
 */
export class GraceTimers<T> {
  private readonly due = new Map<T, number>();
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    readonly graceMs: number,
    private readonly expire: (item: T) => void,
  ) {
    // A longer period would overflow setTimeout and re-arm every millisecond: a busy loop.
    checkTimerMs(graceMs, "a grace period");
  }

  /** Starts `item`'s period (a second start keeps the first); a cascade passes one `startedAt` for all. */
  start(item: T, startedAt: number = Date.now()): void {
    if (this.due.has(item)) return;
    const due = startedAt + this.graceMs;
    this.due.set(item, due);
    if (this.timer === undefined) this.arm(due - Date.now());
  }

  stop(item: T): void {
    if (!this.due.delete(item) || this.due.size > 0) return;
    // Nothing left to wait for: no timer outlives the work.
    this.clearTimer();
  }

  /** Stops every period: nothing will end them now. */
  clear(): void {
    this.due.clear();
    this.clearTimer();
  }

  private arm(ms: number): void {
    checkTimerMs(Math.max(0, ms), "a timer delay");
    this.timer = setTimeout(this.fire, Math.max(0, ms));
    this.timer.unref?.();
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = Date.now();
    // `expire` may start and stop periods: the Map's iterator sees both.
    for (const [item, due] of this.due) {
      if (due > now) {
        if (this.timer === undefined) this.arm(due - now);
        return;
      }
      this.due.delete(item);
      // One throwing expiry must not leave the periods after it without a timer.
      try {
        this.expire(item);
      } catch (error) {
        reportErrors([error], "ending a grace period");
      }
    }
  };
}
