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

/** A burst with its latencies kept, so that slices of one round can be merged. */
export interface LoadSample extends LoadResult {
  readonly latencies: readonly number[];
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

export function loadSample(latencies: readonly number[], elapsedMs: number): LoadSample {
  return { ...loadResult(latencies, elapsedMs), latencies };
}

/** One figure from several slices of a round: all their calls over all their time. */
export function mergeSlices(slices: readonly LoadSample[]): LoadResult {
  return loadResult(
    slices.flatMap((slice) => slice.latencies),
    slices.reduce((sum, slice) => sum + slice.elapsedMs, 0),
  );
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
): Promise<LoadSample> {
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
  return loadSample(latencies, last - start);
}
