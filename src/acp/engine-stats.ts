const LATENCY_MEMORY = 4096;

/** Milliseconds from a cancel reaching a job to its answer leaving: the last 4096, in no order. */
export class LatencyRing {
  readonly values: number[] = [];
  private recorded = 0;

  record(ms: number): void {
    // Over the oldest once full: `shift()` moved the whole array on every answer (5% of a cascade's samples).
    this.values[this.recorded++ % LATENCY_MEMORY] = ms;
  }
}
