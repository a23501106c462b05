import { strict as assert } from "node:assert";
import { interleave, interleaveGroups, interleaveSliced, rotated } from "../../bench/lib/interleave.js";
import { loadSample, mergeSlices } from "../../bench/lib/load.js";

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

  it("merges each round's slices into one figure: all the calls over all the time", async () => {
    const log: string[] = [];
    let pass = 0;
    const cell = (key: string) => ({
      key,
      run: async () => {
        log.push(key);
        pass++;
        // Slice k of any cell: k + 1 calls of 1 ms each, over 10 ms.
        return loadSample(Array.from({ length: (pass % 2) + 1 }, () => 1), 10);
      },
    });
    const results = await interleaveSliced([[cell("a"), cell("b")]], 3, 4, mergeSlices, 1);
    // A warm-up round of 4 passes, then 3 rounds of 4: every pass runs a and b once.
    assert.equal(log.length, 2 * 4 * 4);
    for (let at = 0; at < log.length; at += 2) assert.deepEqual([...log.slice(at, at + 2)].sort(), ["a", "b"]);
    for (const key of ["a", "b"]) {
      const rounds = results.get(key) ?? [];
      assert.equal(rounds.length, 3);
      for (const round of rounds) {
        assert.equal(round.elapsedMs, 40);
        assert.equal(round.completed, Math.round(round.rps * 0.04));
        assert.ok(round.completed >= 4 && round.completed <= 8, `${round.completed}`);
        assert.equal("latencies" in round, false);
      }
    }
  });
});
