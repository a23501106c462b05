/**
 * Keys remembered for a fixed window, at most `capacity` of them. Every key gets the same
 * window, so they expire in insertion order: pruning looks only at the front of the Map.
 */
export class TimedKeys {
  private readonly expiry = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  get size(): number {
    this.prune();
    return this.expiry.size;
  }

  add(key: string): void {
    if (this.capacity <= 0 || this.windowMs <= 0) return;
    this.prune();
    this.expiry.delete(key);
    this.expiry.set(key, Date.now() + this.windowMs);
    if (this.expiry.size > this.capacity) {
      const oldest = this.expiry.keys().next();
      if (!oldest.done) this.expiry.delete(oldest.value);
    }
  }

  has(key: string): boolean {
    this.prune();
    return this.expiry.has(key);
  }

  delete(key: string): boolean {
    return this.expiry.delete(key);
  }

  clear(): void {
    this.expiry.clear();
  }

  private prune(): void {
    const now = Date.now();
    for (const [key, due] of this.expiry) {
      if (due > now) return;
      this.expiry.delete(key);
    }
  }
}
