/**
 * Keys remembered for a fixed window, at most `capacity` of them, oldest forgotten first.
 *
 * Every key gets the same window, so keys expire in insertion order and a FIFO queue
 * finds them. The queue is three parallel arrays with a moving head rather than a Map
 * iterated from its front: V8 leaves a hole for every Map entry deleted, and scanning
 * past thousands of holes on every call made a flood of notices quadratic.
 */
export class TimedKeys {
  /** key → the sequence number of its live queue entry. */
  private readonly live = new Map<string, number>();
  /** Consumed slots are cleared at once, so a forgotten key's string is freed before the next compaction. */
  private queueKeys: (string | undefined)[] = [];
  private queueSeqs: number[] = [];
  private queueDue: number[] = [];
  private head = 0;
  private seq = 0;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  get size(): number {
    this.prune(Date.now());
    return this.live.size;
  }

  add(key: string): void {
    if (this.capacity <= 0 || this.windowMs <= 0) return;
    const now = Date.now();
    this.prune(now);
    const seq = ++this.seq;
    // A key added again keeps only its newest entry live; the old one is skipped when popped.
    this.live.set(key, seq);
    this.queueKeys.push(key);
    this.queueSeqs.push(seq);
    this.queueDue.push(now + this.windowMs);
    while (this.live.size > this.capacity) this.popFront();
    this.compact();
  }

  has(key: string): boolean {
    this.prune(Date.now());
    return this.live.has(key);
  }

  delete(key: string): boolean {
    return this.live.delete(key);
  }

  clear(): void {
    this.live.clear();
    this.queueKeys = [];
    this.queueSeqs = [];
    this.queueDue = [];
    this.head = 0;
  }

  private prune(now: number): void {
    while (this.head < this.queueKeys.length && (this.queueDue[this.head] as number) <= now) this.popFront();
  }

  private popFront(): void {
    const key = this.queueKeys[this.head] as string;
    if (this.live.get(key) === this.queueSeqs[this.head]) this.live.delete(key);
    this.queueKeys[this.head] = undefined;
    this.head++;
  }

  /**
   * Keeps the queue O(live keys) at O(1) amortised cost: the consumed prefix is cut once
   * it is longer than what is left, and stale entries (keys added again or deleted) are
   * filtered out once they outnumber the live ones.
   */
  private compact(): void {
    const length = this.queueKeys.length - this.head;
    if (length - this.live.size > this.live.size + 1024) {
      this.rebuild();
    } else if (this.head > 1024 && this.head > length) {
      this.queueKeys = this.queueKeys.slice(this.head);
      this.queueSeqs = this.queueSeqs.slice(this.head);
      this.queueDue = this.queueDue.slice(this.head);
      this.head = 0;
    }
  }

  private rebuild(): void {
    const keys: (string | undefined)[] = [];
    const seqs: number[] = [];
    const due: number[] = [];
    for (let i = this.head; i < this.queueKeys.length; i++) {
      const key = this.queueKeys[i] as string;
      if (this.live.get(key) !== this.queueSeqs[i]) continue;
      keys.push(key);
      seqs.push(this.queueSeqs[i] as number);
      due.push(this.queueDue[i] as number);
    }
    this.queueKeys = keys;
    this.queueSeqs = seqs;
    this.queueDue = due;
    this.head = 0;
  }
}
