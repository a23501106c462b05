import assert from "node:assert/strict";
import sinon from "sinon";
import { Job } from "../../src/core/job.js";
import { JobTable } from "../../src/core/job-table.js";
import { settle, TestTable } from "../support/jobs.js";

describe("JobTable", () => {
  describe("create", () => {
    it("creates a running job under a key with the payload", () => {
      const table = new TestTable<number, string>();
      const job = table.create(1, "payload");
      assert.ok(job instanceof Job);
      assert.equal(job.payload, "payload");
      assert.equal(job.state, "running");
      assert.equal(table.size, 1);
      assert.equal(table.has(1), true);
      assert.equal(table.get(1), job);
    });

    it("rejects a duplicate in-flight key and keeps the original job", () => {
      const table = new TestTable<string, string>();
      const first = table.create("k", "first");
      assert.equal(table.create("k", "second"), undefined);
      assert.equal(table.get("k"), first);
      assert.equal(table.get("k")?.payload, "first");
      assert.equal(table.size, 1);
    });

    it("rejects a key whose job is cancelling but not yet settled", () => {
      const table = new TestTable<string, null>();
      table.create("k", null);
      table.cancel("k", "external");
      assert.equal(table.create("k", null), undefined);
    });

    it("accepts a key again once its job settled", () => {
      const table = new TestTable<string, string>();
      const first = table.create("k", "first");
      table.settle("k");
      const second = table.create("k", "second");
      assert.ok(second !== undefined);
      assert.notEqual(second, first);
      assert.equal(table.get("k"), second);
      // the reused key is in flight again, so cancel reaches the new job
      assert.equal(table.cancel("k", "external"), "cancelled");
      assert.equal(second.state, "cancelling");
      assert.equal(first?.state, "settled");
    });

    it("attaches the job to the given parent", () => {
      const table = new TestTable<number, string>();
      const parent = table.create(1, "parent");
      assert.ok(parent !== undefined);
      const child = table.create(2, "child", parent);
      assert.ok(child !== undefined);
      assert.equal(child.parent, parent);
      assert.equal(parent.childCount, 1);
    });

    it('treats 1 and "1" as distinct keys', () => {
      const table = new TestTable<number | string, string>();
      const numeric = table.create(1, "number");
      const text = table.create("1", "string");
      assert.ok(numeric !== undefined && text !== undefined);
      assert.notEqual(numeric, text);
      assert.equal(table.size, 2);
      table.settle(1);
      assert.equal(table.has(1), false);
      assert.equal(table.has("1"), true);
      assert.equal(table.cancel(1, "external"), "not-found");
      assert.equal(table.cancel("1", "external"), "cancelled");
      assert.equal(text.state, "cancelling");
    });

    it("handles a null key like any other", () => {
      const table = new TestTable<string | null, string>();
      assert.ok(table.create(null, "x") !== undefined);
      assert.equal(table.create(null, "y"), undefined);
      table.settle(null);
      assert.equal(table.cancel(null, "external"), "not-found");
    });
  });

  describe("settle", () => {
    it("settles the job, removes it and returns it", () => {
      const table = new TestTable<number, string>();
      const job = table.create(7, "x");
      assert.equal(table.settle(7), job);
      assert.equal(job?.state, "settled");
      assert.equal(table.has(7), false);
      assert.equal(table.get(7), undefined);
      assert.equal(table.size, 0);
    });

    it("returns undefined for a key not in flight, including a second settle", () => {
      const table = new TestTable<number, string>();
      assert.equal(table.settle(1), undefined);
      table.create(1, "x");
      assert.ok(table.settle(1) !== undefined);
      assert.equal(table.settle(1), undefined);
    });

    it("detaches the settled job from its parent", () => {
      const table = new TestTable<number, string>();
      const parent = table.create(1, "p");
      table.create(2, "c", parent);
      assert.equal(parent?.childCount, 1);
      table.settle(2);
      assert.equal(parent?.childCount, 0);
    });
  });

  describe("cancel", () => {
    it("cancels an in-flight job, cascading and visiting, and keeps it in the table", () => {
      const table = new TestTable<number, string>();
      const parent = table.create(1, "p");
      const child = table.create(2, "c", parent);
      const order: string[] = [];
      assert.equal(
        table.cancel(1, "session", (job) => order.push(job.payload)),
        "cancelled",
      );
      assert.deepEqual(order, ["c", "p"]);
      assert.equal(parent?.reason, "session");
      assert.equal(child?.state, "cancelling");
      // cancelling is not settling: the jobs still await their answer
      assert.equal(table.size, 2);
      assert.equal(table.has(1), true);
    });

    it("says already-cancelled the second time", () => {
      const table = new TestTable<number, string>();
      table.create(1, "x");
      assert.equal(table.cancel(1, "external"), "cancelled");
      const visit = sinon.spy();
      assert.equal(table.cancel(1, "deadline", visit), "already-cancelled");
      assert.equal(visit.callCount, 0);
      assert.equal(table.get(1)?.reason, "external");
    });

    it("forgets a key once settled: a later cancel by key finds nothing and visits nothing", () => {
      const table = new TestTable<number, string>();
      table.create(1, "x");
      table.settle(1);
      const visit = sinon.spy();
      assert.equal(table.cancel(1, "external", visit), "not-found");
      assert.equal(visit.callCount, 0);
    });

    it("says already-settled for a job settled directly but still in the table", () => {
      const table = new TestTable<number, string>();
      const job = table.create(1, "x");
      if (job !== undefined) settle(job);
      assert.equal(table.cancel(1, "external"), "already-settled");
    });

    it("says not-found for a key never seen", () => {
      const table = new TestTable<number, string>();
      assert.equal(table.cancel(42, "external"), "not-found");
      table.create(1, "x");
      assert.equal(table.cancel(42, "external"), "not-found");
    });
  });

  describe("iteration and clear", () => {
    it("values() yields the in-flight jobs", () => {
      const table = new TestTable<number, string>();
      table.create(1, "a");
      table.create(2, "b");
      table.create(3, "c");
      table.settle(2);
      assert.deepEqual(
        [...table.values()].map((job) => job.payload),
        ["a", "c"],
      );
    });

    it("clear() forgets in-flight jobs and settled keys", () => {
      const table = new TestTable<number, string>();
      const live = table.create(1, "live");
      table.create(2, "done");
      table.settle(2);
      table.clear();
      assert.equal(table.size, 0);
      assert.equal(table.has(1), false);
      assert.equal(table.cancel(1, "external"), "not-found");
      assert.equal(table.cancel(2, "external"), "not-found");
      // clear does not touch the jobs themselves
      assert.equal(live?.state, "running");
      assert.ok(table.create(1, "again") !== undefined);
    });
  });

  describe("keys of every kind, in and out of the integer slots", () => {
    /** A reference model: a plain Map of what should be in flight. */
    function check(table: JobTable<unknown, number>, model: Map<unknown, number>) {
      assert.equal(table.size, model.size);
      for (const [key, payload] of model) assert.equal(table.get(key)?.payload, payload, `key ${String(key)}`);
      const payloads = [...table.values()].map((j) => j.payload);
      assert.deepEqual(payloads.sort((a, b) => a - b), [...model.values()].sort((a, b) => a - b));
    }

    it("keeps integers that share a slot, negative, fractional, huge and string keys apart", () => {
      const table = new TestTable<unknown, number>();
      const model = new Map<unknown, number>();
      const keys: unknown[] = [0, 64, 128, 1 << 18, -1, -64, 0.5, 64.5, 2 ** 31, 2 ** 53 - 1, "0", "64", null, 1, 65];
      keys.forEach((key, i) => {
        assert.ok(table.create(key, i) !== undefined, `create ${String(key)}`);
        model.set(key, i);
      });
      check(table, model);
      for (const key of keys) assert.equal(table.create(key, -1), undefined, `duplicate ${String(key)}`);
      for (const key of [64, -1, "64", 2 ** 31, null]) {
        assert.equal(table.settle(key)?.payload, model.get(key));
        model.delete(key);
      }
      check(table, model);
      assert.equal(table.get(64), undefined);
      assert.ok(table.create(64, 99) !== undefined);
      model.set(64, 99);
      check(table, model);
    });

    it("holds 100,000 sequential ids in flight, with a long-lived one, and empties back to nothing", () => {
      const table = new TestTable<number, number>();
      const model = new Map<unknown, number>();
      table.create(7, -7);
      model.set(7, -7);
      for (let id = 1000; id < 101_000; id++) {
        table.create(id, id);
        model.set(id, id);
      }
      check(table as JobTable<unknown, number>, model);
      // Ids that wrap around onto taken slots still work.
      for (let id = 1_000_000; id < 1_000_100; id++) {
        assert.ok(table.create(id, id) !== undefined);
        assert.equal(table.get(id)?.payload, id);
        assert.equal(table.settle(id)?.payload, id);
      }
      for (let id = 1000; id < 101_000; id++) assert.equal(table.settle(id)?.payload, id);
      model.clear();
      model.set(7, -7);
      check(table as JobTable<unknown, number>, model);
      table.settle(7);
      assert.equal(table.size, 0);
      assert.deepEqual([...table.values()], []);
    });

    it("agrees with a Map under random creates and settles", () => {
      const table = new TestTable<unknown, number>();
      const model = new Map<unknown, number>();
      let seed = 42;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      for (let step = 0; step < 20_000; step++) {
        const r = random();
        const key = r < 0.8 ? Math.floor(random() * 3000) : r < 0.9 ? `s${Math.floor(random() * 50)}` : -Math.floor(random() * 50);
        if (random() < 0.55) {
          const created = table.create(key, step);
          assert.equal(created !== undefined, !model.has(key));
          if (created !== undefined) model.set(key, step);
        } else {
          assert.equal(table.settle(key)?.payload, model.get(key));
          model.delete(key);
        }
      }
      check(table, model);
    });
  });
});
