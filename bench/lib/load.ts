import { percentile } from "./stats.js";

/** One burst of a closed-loop load: throughput and latency. */
export interface LoadResult {
  completed: number;
  elapsedMs: number;
  /** Requests per second. */
  rps: number;
  /** Round-trip latency percentiles, in ms. */
  p50: number;
  p99: number;
}

export function loadResult(latencies: readonly number[], elapsedMs: number): LoadResult {
  return {
    completed: latencies.length,
    elapsedMs,
    rps: (latencies.length / elapsedMs) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/**
 * Keeps `concurrency` calls in flight for `durationMs`: each worker issues its next call
 * as soon as the previous one is answered. Calls still in flight at the end are waited
 * for and counted.
 */
export async function closedLoop(
  call: () => Promise<unknown>,
  concurrency: number,
  durationMs: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + durationMs;
  let last = start;
  const worker = async () => {
    while (performance.now() < end) {
      const sent = performance.now();
      await call();
      last = performance.now();
      latencies.push(last - sent);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return loadResult(latencies, last - start);
}
