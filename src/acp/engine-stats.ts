const LATENCY_MEMORY = 4096;

/** Milliseconds from a cancel reaching a job to its answer leaving: the last 4096. */
export class LatencyRing {
  readonly values: number[] = [];

  record(ms: number): void {
    this.values.push(ms);
    if (this.values.length > LATENCY_MEMORY) this.values.shift(); // the oldest goes
  }
}
