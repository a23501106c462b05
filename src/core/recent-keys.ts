/**
 * The one bounded memory of keys: at most `capacity`, each for at most `windowMs` (default forever), oldest
 * forgotten first. A queue of keys (and their dues) beside a Map of each key's place in it (an entry at
 * another place is stale); every read first drops what expired. Why a queue, not a Map's order:
 * docs/decisions.md, "Optimisations kept and dropped".
 */
export class RecentKeys<K> {
  private readonly live = new Map<K, number>();
  private keys: (K | undefined)[] = [];
  private dues: number[] = [];
  private head = 0;
  /** The place of `keys[0]`: entries cut from the queue's front still count, so a place is never reused. */
  private start = 0;
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
    this.live.set(key, this.start + this.keys.length);
    this.keys.push(key);
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

  /** Drops the expired entries at the front; returns the time it read. */
  private prune(): number {
    if (!this.timed) return 0;
    const now = Date.now();
    while (this.head < this.keys.length && (this.dues[this.head] as number) <= now) this.popFront();
    return now;
  }

  private popFront(): void {
    const key = this.keys[this.head] as K;
    if (this.live.get(key) === this.start + this.head) this.live.delete(key);
    this.keys[this.head++] = undefined;
  }

  /** Keeps the queue O(live keys), amortised O(1): cuts the consumed front, or drops stale entries. */
  private compact(): void {
    const length = this.keys.length - this.head;
    if (length - this.live.size > this.live.size + 1024) this.rebuild();
    else if (this.head > 1024 && this.head > length) {
      this.start += this.head;
      this.keys = this.keys.slice(this.head);
      this.dues = this.dues.slice(this.head);
      this.head = 0;
    }
  }

  private rebuild(): void {
    const keys: (K | undefined)[] = [];
    const dues: number[] = [];
    const start = this.start + this.keys.length;
    for (let at = this.head; at < this.keys.length; at++) {
      const key = this.keys[at] as K;
      if (this.live.get(key) !== this.start + at) continue;
      this.live.set(key, start + keys.length);
      keys.push(key);
      if (this.timed) dues.push(this.dues[at] as number);
    }
    this.keys = keys;
    this.dues = dues;
    this.head = 0;
    this.start = start;
  }
}
