/** The longest delay `setTimeout` honours; a longer one overflows and fires after about 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Throws a RangeError naming the maximum when `ms` is not a delay a timer can wait. */
export function checkTimerMs(ms: number, what: string): void {
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TIMER_MS) {
    throw new RangeError(`${what} must be a finite number of milliseconds from 0 to ${MAX_TIMER_MS} (got ${ms})`);
  }
}
