import assert from "node:assert/strict";
import fc from "fast-check";
import sinon from "sinon";
import { TimedKeys } from "../../src/rap/timed-keys.js";

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

describe("TimedKeys (remembered window: FIFO queue with compaction)", () => {
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
        const keys = new TimedKeys(1_000, capacity);
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

  it("keeps nothing with a zero window or capacity, and clear() forgets everything", () => {
    for (const keys of [new TimedKeys(0, 10), new TimedKeys(10, 0)]) {
      keys.add("a");
      assert.equal(keys.has("a"), false);
    }
    const keys = new TimedKeys(1_000, 10);
    keys.add("a");
    keys.clear();
    assert.equal(keys.size, 0);
  });
});
