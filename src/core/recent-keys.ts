/**
 * The one bounded memory of keys: at most `capacity`, each for at most `windowMs` (default forever), oldest
 * forgotten first. A queue of (key, stamp, due) beside a Map of each key's latest stamp (an entry with an
 * older stamp is stale); every read first drops what expired. Why a queue, not a Map's order: docs/decisions.md,
 * "Optimisations kept and dropped".
 */
export class RecentKeys<K> {
  private readonly live = new Map<K, number>();
  private keys: (K | undefined)[] = [];
  private stamps: number[] = [];
  private dues: number[] = [];
  private head = 0;
  private lastStamp = 0;
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

  /** Keeps the queue O(live keys), amortised O(1): cuts the consumed prefix, or drops stale entries. */
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
