/** One thing whose memory per in-flight request is measured, in a process of its own. */
export interface MemorySubject {
  /** Puts `n` requests in flight (resolves once they have all left for the peer). */
  load(n: number): Promise<void>;
  /** Answers everything in flight (resolves once every answer has been taken in). */
  drain(): Promise<void>;
}

/** Ids seen leaving, as a range (keeping them all would count against the subject). */
export class IdRange {
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  seen = 0;
  add(id: number): void {
    if (id < this.min) this.min = id;
    if (id > this.max) this.max = id;
    this.seen++;
  }

  reset(): void {
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
  }
}

export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 1_000_000) throw new Error(`gave up waiting for ${what}`);
    await tick();
  }
}

export const SESSION = { sessionId: "session-1" };
