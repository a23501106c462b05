import { strict as assert } from "node:assert";
import { interleave, interleaveGroups, rotated } from "../../bench/lib/interleave.js";

/** Cells that record the order they ran in, and return their round's index of the run. */
function recorder(keys: readonly string[], log: string[]) {
  return keys.map((key) => ({
    key,
    run: async () => {
      log.push(key);
      return log.length;
    },
  }));
}

describe("bench interleave", () => {
  for (const length of [2, 3, 4, 7, 8]) {
    it(`puts each of ${length} items first, and last, equally often over ${2 * length} rounds`, () => {
      const items = Array.from({ length }, (_, i) => i);
      const firsts = new Map<number, number>();
      const lasts = new Map<number, number>();
      for (let round = 0; round < 2 * length; round++) {
        const order = rotated(items, round);
        assert.deepEqual([...order].sort((x, y) => x - y), items);
        firsts.set(order[0] as number, (firsts.get(order[0] as number) ?? 0) + 1);
        lasts.set(order[length - 1] as number, (lasts.get(order[length - 1] as number) ?? 0) + 1);
      }
      for (const item of items) {
        assert.equal(firsts.get(item), 2, `first: ${[...firsts]}`);
        assert.equal(lasts.get(item), 2, `last: ${[...lasts]}`);
      }
    });
  }

  it("runs every cell once per round, each first equally often, and drops warm-up rounds", async () => {
    const log: string[] = [];
    const results = await interleave(recorder(["a", "b", "c"], log), 6, 1);
    assert.equal(log.length, 21);
    for (const key of ["a", "b", "c"]) assert.equal(results.get(key)?.length, 6);
    const firsts = [0, 1, 2, 3, 4, 5, 6].map((round) => log[round * 3]);
    // Rounds 1..6 are measured: each cell leads two of them.
    for (const key of ["a", "b", "c"]) assert.equal(firsts.slice(1).filter((k) => k === key).length, 2);
  });

  it("keeps each group's cells back to back in every round, and rotates which group leads", async () => {
    const log: string[] = [];
    const groups = [recorder(["a1", "b1", "c1"], log), recorder(["a64", "b64", "c64"], log)];
    const results = await interleaveGroups(groups, 4);
    assert.equal(log.length, 24);
    for (let round = 0; round < 4; round++) {
      const ran = log.slice(round * 6, round * 6 + 6);
      const first = ran.slice(0, 3).map((k) => k.slice(1));
      const second = ran.slice(3).map((k) => k.slice(1));
      // Three cells of one concurrency, then three of the other.
      assert.equal(new Set(first).size, 1, `round ${round}: ${ran.join(" ")}`);
      assert.equal(new Set(second).size, 1, `round ${round}: ${ran.join(" ")}`);
      assert.notEqual(first[0], second[0]);
    }
    const leaders = [0, 1, 2, 3].map((round) => (log[round * 6] as string).slice(1));
    assert.deepEqual([...new Set(leaders)].sort(), ["1", "64"]);
    for (const key of ["a1", "b1", "c1", "a64", "b64", "c64"]) assert.equal(results.get(key)?.length, 4);
  });
});
