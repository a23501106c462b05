import assert from "node:assert/strict";
import { RecentKeys } from "../../src/core/recent-keys.js";

describe("RecentKeys", () => {
  it("remembers added keys", () => {
    const keys = new RecentKeys<string>(3);
    keys.add("a");
    keys.add("b");
    assert.equal(keys.has("a"), true);
    assert.equal(keys.has("b"), true);
    assert.equal(keys.has("c"), false);
    assert.equal(keys.size, 2);
  });

  it("forgets the oldest first once past capacity", () => {
    const keys = new RecentKeys<number>(2);
    keys.add(1);
    keys.add(2);
    keys.add(3);
    assert.equal(keys.size, 2);
    assert.equal(keys.has(1), false);
    assert.equal(keys.has(2), true);
    assert.equal(keys.has(3), true);
  });

  it("re-adding a key refreshes it without growing", () => {
    const keys = new RecentKeys<number>(2);
    keys.add(1);
    keys.add(2);
    keys.add(1);
    assert.equal(keys.size, 2);
    keys.add(3); // evicts 2, the least recently added
    assert.equal(keys.has(1), true);
    assert.equal(keys.has(2), false);
    assert.equal(keys.has(3), true);
  });

  it("never exceeds its capacity", () => {
    const keys = new RecentKeys<number>(100);
    for (let i = 0; i < 5000; i++) {
      keys.add(i);
      assert.ok(keys.size <= 100);
    }
    assert.equal(keys.size, 100);
    assert.equal(keys.has(4899), false);
    assert.equal(keys.has(4900), true);
    assert.equal(keys.has(4999), true);
  });

  it("remembers nothing with a zero or negative capacity", () => {
    for (const capacity of [0, -1]) {
      const keys = new RecentKeys<string>(capacity);
      keys.add("a");
      assert.equal(keys.has("a"), false);
      assert.equal(keys.size, 0);
    }
  });

  it('distinguishes 1 from "1"', () => {
    const keys = new RecentKeys<number | string>(4);
    keys.add(1);
    assert.equal(keys.has(1), true);
    assert.equal(keys.has("1"), false);
  });

  it("delete reports whether the key was there", () => {
    const keys = new RecentKeys<string>(3);
    keys.add("a");
    assert.equal(keys.delete("a"), true);
    assert.equal(keys.delete("a"), false);
    assert.equal(keys.has("a"), false);
    assert.equal(keys.size, 0);
  });

  it("clear forgets everything", () => {
    const keys = new RecentKeys<string>(3);
    keys.add("a");
    keys.add("b");
    keys.clear();
    assert.equal(keys.size, 0);
    assert.equal(keys.has("a"), false);
    keys.add("c");
    assert.equal(keys.has("c"), true);
  });

  it("behaves like a list of keys, oldest first, under any mix of adds, re-adds and deletes", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (const capacity of [1, 3, 16]) {
      const keys = new RecentKeys<number>(capacity);
      let model: number[] = [];
      for (let step = 0; step < 20000; step++) {
        const key = random(capacity * 3);
        if (random(3) === 0) {
          assert.equal(keys.delete(key), model.includes(key));
          model = model.filter((k) => k !== key);
        } else {
          keys.add(key);
          model = [...model.filter((k) => k !== key), key];
          if (model.length > capacity) model.shift();
        }
        assert.equal(keys.size, model.length);
        for (let k = 0; k < capacity * 3; k++) assert.equal(keys.has(k), model.includes(k), `key ${k} at step ${step}`);
      }
    }
  });

  it("holds no more entries than twice its capacity, whatever passed through it", () => {
    const keys = new RecentKeys<number>(10);
    for (let i = 0; i < 10000; i++) {
      keys.add(i);
      if (i % 3 === 0) keys.delete(i);
      const inside = keys as unknown as { order: unknown[]; head: number };
      assert.ok(inside.order.length <= 2 * 10 + 1 + 10, `${inside.order.length} entries at ${i}`);
    }
  });
});
