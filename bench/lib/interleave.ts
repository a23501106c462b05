/**
 * Runs every cell once per round, rotating the order each round so that no subject always
 * runs first (warm caches) or last (a tired machine). Anchors and subjects of a scenario
 * are cells of the same call, so their ratios come from the same conditions.
 */
export interface Cell<T> {
  key: string;
  run(): Promise<T>;
}

export async function interleave<T>(
  cells: readonly Cell<T>[],
  rounds: number,
  warmupRounds = 0,
): Promise<Map<string, T[]>> {
  return interleaveGroups([cells], rounds, warmupRounds);
}

/**
 * As `interleave`, with the cells that are compared with each other kept together: in every
 * round each group's cells run back to back (in a rotated order), so that a ratio within a
 * group compares runs seconds apart at most, not a whole round apart. Which group runs first
 * rotates too.
 */
export async function interleaveGroups<T>(
  groups: readonly (readonly Cell<T>[])[],
  rounds: number,
  warmupRounds = 0,
): Promise<Map<string, T[]>> {
  const results = new Map<string, T[]>(groups.flat().map((cell) => [cell.key, []]));
  for (let round = 0; round < warmupRounds + rounds; round++) {
    for (const group of rotated(groups, round)) {
      for (const cell of rotated(group, round)) {
        const value = await cell.run();
        if (round >= warmupRounds) results.get(cell.key)?.push(value);
      }
    }
  }
  return results;
}

/**
 * Every other round runs backwards, and each pair of rounds starts one item further on: over
 * 2 × length rounds every item runs first, and last, equally often, for any length (a plain
 * rotation that also reverses every other round undoes itself when the length is even).
 */
export function rotated<T>(items: readonly T[], round: number): T[] {
  const shift = Math.floor(round / 2) % Math.max(1, items.length);
  const order = [...items.slice(shift), ...items.slice(0, shift)];
  if (round % 2 === 1) order.reverse();
  return order;
}

/**
 * As `interleaveGroups`, with each round cut into `slices` short passes: every cell of a group
 * runs a slice, then every cell runs its next slice, and so on; `merge` makes a cell's slices
 * of one round its figure for that round. Cells compared with each other then share the
 * machine's slow phases to within a slice, not a whole cell's run.
 */
export async function interleaveSliced<S, T>(
  groups: readonly (readonly Cell<S>[])[],
  rounds: number,
  slices: number,
  merge: (slices: readonly S[]) => T,
  warmupRounds = 0,
): Promise<Map<string, T[]>> {
  const passes = await interleaveGroups(groups, rounds * slices, warmupRounds * slices);
  const results = new Map<string, T[]>();
  for (const [key, samples] of passes) {
    const merged: T[] = [];
    for (let at = 0; at < samples.length; at += slices) merged.push(merge(samples.slice(at, at + slices)));
    results.set(key, merged);
  }
  return results;
}
