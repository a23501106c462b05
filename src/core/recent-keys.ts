/**
 * The one bounded memory of keys: at most `capacity` of them, each for at most `windowMs`
 * (forever by default), oldest forgotten first. It tells "already settled" from "never seen",
 * and holds early cancels, without keeping every finished job forever.
 *
 * Every key gets the same window, so keys expire in the order they were added: a queue of
 * (key, stamp, due) entries beside a Map from each key to the stamp of its latest add finds
 * them. An entry whose stamp is no longer its key's is stale (the key was deleted or added
 * again) and is passed over. Every read first drops what has expired, so an expired key is
 * never found, whichever method asks.
 */
export class RecentKeys<K> {
  private readonly live = new Map<K, number>();
  /** Consumed slots are cleared at once, so a forgotten key is freed before the next compaction. */
  private keys: (K | undefined)[] = [];
  private stamps: number[] = [];
  private dues: number[] = [];
  private head = 0;
  private lastStamp = 0;
  /** Without a window there is nothing to expire: no due times are kept or read. */
  private readonly timed: boolean;

  constructor(
    private readonly capacity: number,
    private readonly windowMs: number = Number.POSITIVE_INFINITY,
  ) {
    this.timed = windowMs !== Number.POSITIVE_INFINITY;
  }

  get size(): number {
    this.prune();
    return this.live.size;
  }

  add(key: K): void {
    if (this.capacity <= 0 || !(this.windowMs > 0)) return;
    const now = this.prune();
    const stamp = ++this.lastStamp;
    this.live.set(key, stamp);
    this.keys.push(key);
    this.stamps.push(stamp);
    if (this.timed) this.dues.push(now + this.windowMs);
    while (this.live.size > this.capacity) this.popFront();
    this.compact();
  }

  has(key: K): boolean {
    this.prune();
    return this.live.has(key);
  }

  /** Forgets `key`; true when it was remembered (and had not expired). */
  delete(key: K): boolean {
    this.prune();
    return this.live.delete(key);
  }

  clear(): void {
    this.live.clear();
    this.keys = [];
    this.stamps = [];
    this.dues = [];
    this.head = 0;
  }

  /** Drops the expired entries at the front; returns the time it read. */
  private prune(): number {
    if (!this.timed) return 0;
    const now = Date.now();
    while (this.head < this.keys.length && (this.dues[this.head] as number) <= now) this.popFront();
    return now;
  }

  private popFront(): void {
    const key = this.keys[this.head] as K;
    if (this.live.get(key) === this.stamps[this.head]) this.live.delete(key);
    this.keys[this.head] = undefined;
    this.head++;
  }

  /**
   * Keeps the queue O(live keys) at O(1) amortised cost: the consumed prefix is cut once it
   * is longer than what is left, and stale entries are filtered out once they outnumber the
   * live ones.
   */
  private compact(): void {
    const length = this.keys.length - this.head;
    if (length - this.live.size > this.live.size + 1024) this.rebuild();
    else if (this.head > 1024 && this.head > length) {
      this.keys = this.keys.slice(this.head);
      this.stamps = this.stamps.slice(this.head);
      this.dues = this.dues.slice(this.head);
      this.head = 0;
    }
  }

  private rebuild(): void {
    const keys: (K | undefined)[] = [];
    const stamps: number[] = [];
    const dues: number[] = [];
    for (let at = this.head; at < this.keys.length; at++) {
      const key = this.keys[at] as K;
      if (this.live.get(key) !== this.stamps[at]) continue;
      keys.push(key);
      stamps.push(this.stamps[at] as number);
      if (this.timed) dues.push(this.dues[at] as number);
    }
    this.keys = keys;
    this.stamps = stamps;
    this.dues = dues;
    this.head = 0;
  }
}
