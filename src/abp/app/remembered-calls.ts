/** How a finished call ended, as far as a later cancel needs to know. */
export type Ending = "completed" | "cancelled";

/**
 * Finished and cancelled call ids, oldest forgotten first, so "already completed" and "already
 * cancelled" still hold after a call's record is gone, in memory that never grows past `capacity`.
 */
export class RememberedCalls {
  private readonly endings = new Map<string, Ending>();

  constructor(private readonly capacity: number) {}

  remember(callId: string, ending: Ending): void {
    if (this.capacity <= 0) return;
    this.endings.delete(callId);
    this.endings.set(callId, ending);
    if (this.endings.size > this.capacity) {
      const oldest = this.endings.keys().next();
      if (!oldest.done) this.endings.delete(oldest.value);
    }
  }

  get(callId: string): Ending | undefined {
    return this.endings.get(callId);
  }

  get size(): number {
    return this.endings.size;
  }

  clear(): void {
    this.endings.clear();
  }
}
