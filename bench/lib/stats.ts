/** Small, dependency-free statistics for benchmark samples. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100); NaN for no samples. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Ratio a / b, NaN when either side is missing. */
export function ratio(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}

/** The median of one field across rounds. */
export function medianOf<T>(rounds: readonly T[], pick: (round: T) => number): number {
  return median(rounds.map(pick));
}

/** A distribution-free confidence interval for a median: two order statistics of the samples. */
export interface MedianInterval {
  low: number;
  high: number;
  /** The probability that the interval holds the true median (binomial, at least 0.95). */
  coverage: number;
  /** How many samples it was taken from. */
  samples: number;
}

/**
 * The narrowest interval [x(k), x(n+1-k)] of the sorted samples that holds the true median with
 * probability at least 0.95, assuming only that the samples are independent draws of one
 * distribution (rounds of the same cells). Undefined for fewer than 6 samples, where even the
 * whole range holds the median with less than 95% probability.
 */
export function medianInterval(values: readonly number[]): MedianInterval | undefined {
  const sorted = Float64Array.from(values.filter(Number.isFinite)).sort();
  const n = sorted.length;
  // P(fewer than k of n samples fall below the median) for a fair coin: sum of C(n, i) / 2^n, i < k.
  let below = 0;
  let term = 1 / 2 ** n; // C(n, 0) / 2^n
  let k = 0;
  while (k < n && 2 * (below + term) <= 0.05) {
    below += term;
    term = (term * (n - k)) / (k + 1);
    k++;
  }
  if (k === 0) return undefined;
  return { low: sorted[k - 1] as number, high: sorted[n - k] as number, coverage: 1 - 2 * below, samples: n };
}

/**
 * A goal's figure over rounds: the median of the per-round values, its 95% interval, and the
 * values themselves (kept so that a goal judged over several full runs can pool them).
 */
export function overRounds(values: readonly number[]): {
  measured: number;
  interval: MedianInterval | undefined;
  rounds: number[];
} {
  return { measured: median(values), interval: medianInterval(values), rounds: [...values] };
}
