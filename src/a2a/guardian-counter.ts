/**
 * Where the reference guardian counts requests per client and the rules' `rate`: in memory by
 * default; replicas behind one address share one counter (acp-cancel/replicas has a Redis one).
 */
export interface RateCounter {
  /**
   * Records one event for `key` at `now` (ms since the epoch; a shared counter may use its own clock)
   * and answers how many `key` had within the last `windowMs`, this one included. A key keeps one window.
   */
  hit(key: string, windowMs: number, now: number): number | Promise<number>;
}

/** A sliding-window counter in memory; past `maxKeys` keys the least recently hit is forgotten. */
export class MemoryRateCounter implements RateCounter {
  /** Each key's event times, oldest first; `head` is the first still inside the window. */
  private readonly logs = new Map<string, { times: number[]; head: number }>();

  constructor(private readonly maxKeys = 10_000) {}

  hit(key: string, windowMs: number, now: number): number {
    const log = this.logs.get(key) ?? { times: [], head: 0 };
    // Re-inserting keeps the Map in least-recently-hit order; a new key past the cap pushes out the oldest.
    this.logs.delete(key);
    if (this.logs.size >= this.maxKeys) this.logs.delete(this.logs.keys().next().value as string);
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
}
