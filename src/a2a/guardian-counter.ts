/**
 * The reference guardian counts through this one seam: requests per authenticated client (the
 * request limit) and cancels per agent (the rules' `rate`). The default keeps the counts in this
 * process. Replicas of the guardian behind one address must share their counts, so they pass a
 * counter kept elsewhere (a Redis-backed one lives with the replicas code); nothing else changes.
 */
export interface RateCounter {
  /**
   * Records one event for `key` at `now` (ms since the epoch) and answers how many events `key`
   * has had within the last `windowMs`, this one included. A shared counter may use its own
   * clock instead of `now`. A key is always used with the same window.
   */
  hit(key: string, windowMs: number, now: number): number | Promise<number>;
}

/** One key's event times, oldest first; `head` is the first still inside the window. */
interface Log {
  times: number[];
  head: number;
}

/**
 * A sliding-window counter in this process's memory (the default). Each key keeps the times of
 * its events inside the window; past `maxKeys` keys the least recently hit is forgotten, so a
 * stream of new keys cannot grow memory without bound.
 */
export class MemoryRateCounter implements RateCounter {
  private readonly logs = new Map<string, Log>();

  constructor(private readonly maxKeys = 10_000) {}

  hit(key: string, windowMs: number, now: number): number {
    let log = this.logs.get(key);
    if (log === undefined) {
      log = { times: [], head: 0 };
      if (this.logs.size >= this.maxKeys) {
        const oldest = this.logs.keys().next();
        if (!oldest.done) this.logs.delete(oldest.value);
      }
    } else {
      // Re-inserting keeps the Map in least-recently-hit order.
      this.logs.delete(key);
    }
    this.logs.set(key, log);
    const since = now - windowMs;
    while (log.head < log.times.length && (log.times[log.head] as number) <= since) log.head++;
    if (log.head > 64 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
    log.times.push(now);
    return log.times.length - log.head;
  }

  /** Keys remembered now (for tests of the bound). */
  get size(): number {
    return this.logs.size;
  }
}
