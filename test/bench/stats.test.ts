import { strict as assert } from "node:assert";
import { medianInterval } from "../../bench/lib/stats.js";

/** P(X <= k) for X ~ Binomial(n, 1/2), summed exactly from binomial coefficients. */
function binomialAtMost(n: number, k: number): number {
  let total = 0;
  let coefficient = 1;
  for (let i = 0; i <= k; i++) {
    total += coefficient;
    coefficient = (coefficient * (n - i)) / (i + 1);
  }
  return total / 2 ** n;
}

describe("bench medianInterval", () => {
  it("has no interval below 6 samples, where even the whole range holds the median with less than 95%", () => {
    for (const n of [0, 1, 2, 5]) assert.equal(medianInterval(Array.from({ length: n }, (_, i) => i)), undefined);
  });

  it("picks the narrowest pair of order statistics with at least 95% coverage", () => {
    // n = 6: the whole range, 1 - 2/64; n = 9: the 2nd and 8th, 1 - 2 * 10/512.
    const six = medianInterval([6, 1, 5, 2, 4, 3]);
    assert.deepEqual(six && [six.low, six.high, six.samples], [1, 6, 6]);
    assert.equal(six?.coverage, 1 - 2 / 64);
    const nine = medianInterval([9, 1, 8, 2, 7, 3, 6, 4, 5]);
    assert.deepEqual(nine && [nine.low, nine.high], [2, 8]);
    assert.equal(nine?.coverage, 1 - (2 * 10) / 512);
    for (let n = 6; n <= 60; n++) {
      const interval = medianInterval(Array.from({ length: n }, (_, i) => n - i)); // unsorted on purpose
      assert.ok(interval !== undefined);
      const k = interval.low; // the samples are 1..n, so the low end is its own rank
      assert.equal(interval.high, n + 1 - k);
      assert.ok(interval.coverage >= 0.95, `n = ${n}: ${interval.coverage}`);
      assert.ok(Math.abs(interval.coverage - (1 - 2 * binomialAtMost(n, k - 1))) < 1e-12);
      // One order statistic further in would fall below 95%.
      assert.ok(1 - 2 * binomialAtMost(n, k) < 0.95, `n = ${n}: k = ${k} is not the narrowest`);
    }
  });

  it("leaves out samples that were not measured", () => {
    const interval = medianInterval([Number.NaN, 3, 1, 2, 6, 5, 4, Number.POSITIVE_INFINITY]);
    assert.deepEqual(interval && [interval.low, interval.high, interval.samples], [1, 6, 6]);
  });

  it("holds the true median about as often as it says, on draws of a known distribution", () => {
    // A deterministic generator, so the test cannot flake: 2,000 intervals of 9 draws each.
    let seed = 12345;
    const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let held = 0;
    const trials = 2000;
    for (let t = 0; t < trials; t++) {
      const interval = medianInterval(Array.from({ length: 9 }, uniform));
      if (interval !== undefined && interval.low <= 0.5 && interval.high >= 0.5) held++;
    }
    // Nominal 96.1%; three standard errors is about 1.3%.
    assert.ok(held / trials > 0.945 && held / trials < 0.975, `held ${held} of ${trials}`);
  });
});
