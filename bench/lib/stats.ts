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
