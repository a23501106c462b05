import assert from "node:assert/strict";
import fc from "fast-check";
import sinon from "sinon";
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
      // Stale entries are dropped once they outnumber the live ones by the compaction's slack.
      const inside = keys as unknown as { keys: unknown[]; head: number };
      assert.ok(inside.keys.length <= 4 * 10 + 2 * 1024 + 2, `${inside.keys.length} entries at ${i}`);
    }
  });
});

/** The obvious model: an insertion-ordered Map of expiry times, pruned on every look. */
class Model {
  private readonly due = new Map<string, number>();
  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
    private readonly now: () => number,
  ) {}
  private prune() {
    for (const [key, at] of this.due) if (at <= this.now()) this.due.delete(key);
  }
  add(key: string) {
    this.prune();
    this.due.delete(key);
    this.due.set(key, this.now() + this.windowMs);
    while (this.due.size > this.capacity) this.due.delete(this.due.keys().next().value as string);
  }
  has(key: string) {
    this.prune();
    return this.due.has(key);
  }
  delete(key: string) {
    this.due.delete(key);
  }
  get size() {
    this.prune();
    return this.due.size;
  }
}

describe("RecentKeys with a window (FIFO queue with compaction)", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["Date"] });
  });
  afterEach(() => clock.restore());

  it("behaves like the obvious model under any sequence of adds, re-adds, deletes and time passing", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("add" as const), key: fc.integer({ min: 0, max: 40 }), n: fc.integer({ min: 1, max: 1500 }) }),
      fc.record({ kind: fc.constant("readd" as const), key: fc.integer({ min: 0, max: 40 }), n: fc.integer({ min: 1, max: 3000 }) }),
      fc.record({ kind: fc.constant("delete" as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 400 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.array(op, { maxLength: 40 }), (capacity, ops) => {
        clock.setSystemTime(0);
        const keys = new RecentKeys<string>(capacity, 1_000);
        const model = new Model(1_000, capacity, () => Date.now());
        let fresh = 0;
        for (const o of ops) {
          if (o.kind === "add") {
            // Re-add one key, then a burst of new ones: enough to force compaction.
            keys.add(`k${o.key}`);
            model.add(`k${o.key}`);
            for (let i = 0; i < o.n; i++) {
              keys.add(`f${fresh}`);
              model.add(`f${fresh++}`);
            }
          } else if (o.kind === "readd") {
            // The same key again and again: stale queue entries pile up until a rebuild.
            for (let i = 0; i < o.n; i++) {
              keys.add(`k${o.key}`);
              model.add(`k${o.key}`);
            }
          } else if (o.kind === "delete") {
            keys.delete(`k${o.key}`);
            model.delete(`k${o.key}`);
          } else {
            clock.tick(o.ms);
          }
          assert.equal(keys.size, model.size);
          for (let k = 0; k <= 40; k++) assert.equal(keys.has(`k${k}`), model.has(`k${k}`));
          if (fresh > 0) assert.equal(keys.has(`f${fresh - 1}`), model.has(`f${fresh - 1}`));
        }
      }),
      { numRuns: 150 },
    );
  });

  it("an expired key is gone for delete too, not only for has (issue 25 item 13)", () => {
    const keys = new RecentKeys<string>(10, 300);
    keys.add("early");
    clock.tick(700);
    // Without a look first (has, size), delete must not find what expired.
    assert.equal(keys.delete("early"), false);
    keys.add("again");
    clock.tick(299);
    assert.equal(keys.delete("again"), true);
  });

  it("keeps nothing with a zero window or capacity", () => {
    for (const keys of [new RecentKeys<string>(10, 0), new RecentKeys<string>(0, 10)]) {
      keys.add("a");
      assert.equal(keys.has("a"), false);
    }
  });
});
