/**
 * A bounded memory of keys, oldest forgotten first. Used to tell "already settled" from
 * "never seen" without keeping every finished job forever.
 */
export class RecentKeys<K> {
  private readonly keys = new Set<K>();

  constructor(private readonly capacity: number) {}

  add(key: K): void {
    if (this.capacity <= 0) return;
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next();
      if (!oldest.done) this.keys.delete(oldest.value);
    }
  }

  has(key: K): boolean {
    return this.keys.has(key);
  }

  delete(key: K): boolean {
    return this.keys.delete(key);
  }

  get size(): number {
    return this.keys.size;
  }

  clear(): void {
    this.keys.clear();
  }
}
