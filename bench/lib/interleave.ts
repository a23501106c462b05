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
  const results = new Map<string, T[]>(cells.map((cell) => [cell.key, []]));
  for (let round = 0; round < warmupRounds + rounds; round++) {
    const shift = round % Math.max(1, cells.length);
    const order = [...cells.slice(shift), ...cells.slice(0, shift)];
    if (round % 2 === 1) order.reverse();
    for (const cell of order) {
      const value = await cell.run();
      if (round >= warmupRounds) results.get(cell.key)?.push(value);
    }
  }
  return results;
}
