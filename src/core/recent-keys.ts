/**
 * A bounded memory of keys, oldest forgotten first. Used to tell "already settled" from
 * "never seen" without keeping every finished job forever.
 *
 * The order lives in a queue of (key, stamp) entries beside a Map from each key to the
 * stamp of its latest add: an entry whose stamp is no longer its key's is stale (the key
 * was deleted or added again) and is passed over. Forgetting the oldest key reads the
 * queue's head. (A Set used as the queue, whose oldest key is `values().next()`, scans
 * from the start past every entry deleted since its last rehash: with thousands of keys
 * added and deleted, each eviction costs thousands of steps.)
 */
export class RecentKeys<K> {
  private readonly live = new Map<K, number>();
  private order: K[] = [];
  private stamps: number[] = [];
  private head = 0;
  private lastStamp = 0;

  constructor(private readonly capacity: number) {}

  add(key: K): void {
    if (this.capacity <= 0) return;
    const stamp = ++this.lastStamp;
    this.live.set(key, stamp);
    this.order.push(key);
    this.stamps.push(stamp);
    if (this.live.size > this.capacity) this.forgetOldest();
    // The passed-over head, and stale entries (deleted or re-added keys) once they outnumber
    // the live ones, are dropped in one copy: a copy of at most 2 × capacity per capacity adds.
    if (this.head > this.capacity || this.order.length - this.head > 2 * this.capacity) this.compact();
  }

  has(key: K): boolean {
    return this.live.has(key);
  }

  delete(key: K): boolean {
    return this.live.delete(key);
  }

  get size(): number {
    return this.live.size;
  }

  clear(): void {
    this.live.clear();
    this.order = [];
    this.stamps = [];
    this.head = 0;
  }

  private forgetOldest(): void {
    while (this.head < this.order.length) {
      const at = this.head++;
      const key = this.order[at] as K;
      if (this.live.get(key) === this.stamps[at]) {
        this.live.delete(key);
        return;
      }
    }
  }

  private compact(): void {
    const order: K[] = [];
    const stamps: number[] = [];
    for (let at = this.head; at < this.order.length; at++) {
      const key = this.order[at] as K;
      const stamp = this.stamps[at] as number;
      if (this.live.get(key) === stamp) {
        order.push(key);
        stamps.push(stamp);
      }
    }
    this.order = order;
    this.stamps = stamps;
    this.head = 0;
  }
}
