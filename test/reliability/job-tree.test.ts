/**
 * The job tree alone (src/core), against a model: random trees grown while cancels, settles and
 * deadlines happen, then quiescence (the owner settles what is left, as the engine does once
 * every request is answered).
 *
 * Invariants: every job settles exactly once; a cancel visits each job it reaches once, deepest
 * first; the effect of every cancel matches the model; doom and abort signals follow the state;
 * at quiescence no child is attached to any job and no deadline timer is left.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import sinon from "sinon";
import { CANCEL_REASONS, type CancelEffect, type CancelReason, Job, JobCancelledError } from "../../src/core/index.js";
import { checkParameters, figure, scaled } from "./support.js";
import { TestTable, cancelVisiting, hasDeadline, settle } from "../support/jobs.js";

type Op =
  | { kind: "create"; parent: number | null; recent: boolean }
  | { kind: "cancel"; pick: number; reason: CancelReason; byKey: boolean }
  | { kind: "settle"; pick: number; byKey: boolean }
  | { kind: "settleCancelled" }
  | { kind: "deadline"; pick: number; ms: number }
  | { kind: "signal"; pick: number }
  | { kind: "tick"; ms: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("create" as const),
      parent: fc.option(fc.nat(200), { freq: 4 }),
      // Nesting under one of the newest jobs grows deep trees, not only wide ones.
      recent: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("cancel" as const),
      pick: fc.nat(200),
      reason: fc.constantFrom(...CANCEL_REASONS),
      byKey: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("settle" as const), pick: fc.nat(200), byKey: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("settleCancelled" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("deadline" as const), pick: fc.nat(200), ms: fc.integer({ min: 1, max: 80 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("signal" as const), pick: fc.nat(200) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.nat(60) }) },
);

/** What the model believes about one job. */
interface Node {
  key: number;
  job: Job<number>;
  parent: Node | undefined;
  /** Attached at birth (the parent was not settled then). */
  attached: boolean;
  state: "running" | "cancelling" | "settled";
  reason: CancelReason | undefined;
  settleCalls: number;
  settledOnce: number;
  visits: number;
  deadlineAt: number | undefined;
}

interface TreeTotals {
  runs: number;
  jobs: number;
  cancels: number;
  visits: number;
  deadlinesFired: number;
  maxDepth: number;
}

function runTree(ops: Op[], totals: TreeTotals): void {
  const sandbox = sinon.createSandbox();
  const clock = sandbox.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  try {
    const table = new TestTable<number, number>();
    const nodes: Node[] = [];
    const pick = (n: number) => (nodes.length === 0 ? undefined : nodes[n % nodes.length]);
    const visited: Node[] = [];
    const byJob = new Map<Job<number>, Node>();
    const visit = (job: Job<number>) => {
      const node = byJob.get(job);
      assert.ok(node, "visited a job that was never created");
      node.visits++;
      assert.equal(node.visits, 1, `job ${node.key} visited twice`);
      assert.equal(job.state, "cancelling", `job ${node.key} visited while ${job.state}`);
      visited.push(node);
    };
    const children = (node: Node) => nodes.filter((n) => n.parent === node && n.attached && n.state !== "settled");

    /** The model's cancel: mark, recurse into attached unsettled children in birth order, visit. */
    const expectCancel = (node: Node, reason: CancelReason, order: Node[]): CancelEffect => {
      if (node.state === "settled") return "already-settled";
      if (node.state === "cancelling") return "already-cancelled";
      node.state = "cancelling";
      node.reason = reason;
      node.deadlineAt = undefined;
      for (const child of children(node)) expectCancel(child, reason, order);
      order.push(node);
      return "cancelled";
    };

    const doCancel = (node: Node, reason: CancelReason, byKey: boolean) => {
      const order: Node[] = [];
      visited.length = 0;
      const wasSettled = node.state === "settled";
      const expected = expectCancel(node, reason, order);
      const effect = byKey ? table.cancel(node.key, reason, visit) : cancelVisiting(node.job, reason, visit);
      // The table forgets a settled key: by key, a settled job is not found; the job itself says so.
      assert.equal(effect, byKey && wasSettled ? "not-found" : expected, `cancel effect for job ${node.key}`);
      assert.deepEqual(
        visited.map((n) => n.key),
        order.map((n) => n.key),
        "visit order (deepest first, birth order among siblings)",
      );
      // Deepest first: nothing is visited before one of its own visited descendants.
      visited.forEach((n, i) => {
        for (let p = n.parent; p !== undefined; p = p.parent)
          assert.ok(!visited.slice(0, i).includes(p), `job ${p.key} visited before its descendant ${n.key}`);
      });
      if (effect === "cancelled") totals.cancels++;
      totals.visits += visited.length;
    };

    const doSettle = (node: Node, byKey: boolean) => {
      node.settleCalls++;
      const first = node.state !== "settled";
      if (byKey) {
        const settled = table.settle(node.key);
        assert.equal(settled === node.job, first, `table.settle(${node.key})`);
      } else {
        // Jobs settle through the table; a settle of a settled job must refuse.
        const settled = table.settle(node.key);
        assert.equal(settled === node.job, first, `table.settle(${node.key})`);
        assert.equal(settle(node.job), false, `job ${node.key} settled twice`);
      }
      if (first) {
        node.settledOnce++;
        node.state = "settled";
        node.deadlineAt = undefined;
      }
    };

    const checkNode = (node: Node) => {
      const job = node.job;
      assert.equal(job.state, node.state, `state of job ${node.key}`);
      assert.equal(job.reason, node.reason, `reason of job ${node.key}`);
      let doomed = false;
      for (let n: Node | undefined = node; n !== undefined; n = n.parent) if (n.state === "cancelling") doomed = true;
      assert.equal(job.isDoomed, doomed, `isDoomed of job ${node.key}`);
      assert.deepEqual(
        [...job.children].map((c) => byJob.get(c)?.key),
        children(node).map((c) => c.key),
        `children of job ${node.key}`,
      );
      assert.equal(hasDeadline(job), node.deadlineAt !== undefined, `deadline of job ${node.key}`);
      assert.equal(table.has(node.key), node.state !== "settled", `table holds job ${node.key}`);
    };

    for (const op of ops) {
      switch (op.kind) {
        case "create": {
          const parent =
            op.parent === null
              ? undefined
              : op.recent
                ? nodes[nodes.length - 1 - (op.parent % Math.min(3, nodes.length))]
                : pick(op.parent);
          const key = nodes.length;
          const job = table.create(key, key, parent?.job);
          assert.ok(job, "create");
          assert.equal(table.create(key, key), undefined, "a key in flight cannot be created twice");
          const node: Node = {
            key,
            job,
            parent,
            attached: parent !== undefined && parent.state !== "settled",
            state: "running",
            reason: undefined,
            settleCalls: 0,
            settledOnce: 0,
            visits: 0,
            deadlineAt: undefined,
          };
          nodes.push(node);
          byJob.set(job, node);
          let depth = 0;
          for (let p = parent; p !== undefined; p = p.parent) depth++;
          totals.maxDepth = Math.max(totals.maxDepth, depth);
          totals.jobs++;
          break;
        }
        case "cancel": {
          const node = pick(op.pick);
          if (node !== undefined) doCancel(node, op.reason, op.byKey);
          else assert.equal(table.cancel(12_345, op.reason), "not-found");
          break;
        }
        case "settle": {
          const node = pick(op.pick);
          if (node !== undefined) doSettle(node, op.byKey);
          break;
        }
        case "settleCancelled":
          // What the engine does once a cancelled job is answered: settle it, children first.
          for (const node of [...nodes].reverse()) if (node.state === "cancelling") doSettle(node, true);
          break;
        case "deadline": {
          const node = pick(op.pick);
          if (node === undefined) break;
          node.job.setDeadline(op.ms, (expired) => {
            const owner = byJob.get(expired);
            assert.ok(owner, "deadline of an unknown job");
            assert.equal(owner.deadlineAt, clock.now, `deadline of job ${owner.key} fired at the wrong time`);
            assert.equal(owner.state, "running", `deadline fired for a ${owner.state} job`);
            owner.deadlineAt = undefined;
            totals.deadlinesFired++;
            doCancel(owner, "deadline", false);
          });
          node.deadlineAt = node.state === "running" ? clock.now + op.ms : undefined;
          break;
        }
        case "signal": {
          const node = pick(op.pick);
          if (node === undefined) break;
          const signal = node.job.signal;
          assert.equal(signal.aborted, node.state === "cancelling" || (node.state === "settled" && node.reason !== undefined));
          if (signal.aborted) {
            assert.ok(signal.reason instanceof JobCancelledError);
            assert.equal(signal.reason.reason, node.reason);
          }
          break;
        }
        case "tick": {
          // Deadlines due in this window fire in time order, each only while its job runs.
          clock.tick(op.ms);
          break;
        }
      }
      for (const node of nodes) checkNode(node);
    }

    // Quiescence: the owner settles what is left, leaves first (as answers arrive).
    for (const node of [...nodes].reverse()) if (node.state !== "settled") doSettle(node, true);
    for (const node of nodes) {
      checkNode(node);
      assert.equal(node.settledOnce, 1, `job ${node.key} settled ${node.settledOnce} times`);
      assert.equal(node.job.childCount, 0, `job ${node.key} still holds a child after quiescence`);
      assert.equal(node.job.isDoomed, false);
    }
    assert.equal(table.size, 0, "table empty at quiescence");
    assert.equal(clock.countTimers(), 0, "deadline timers left at quiescence");
    // Every job has been settled: a late cancel finds nothing to do.
    for (const node of nodes) {
      assert.equal(table.cancel(node.key, "external"), "not-found");
      assert.equal(node.job.cancel("external"), "already-settled");
    }
    totals.runs++;
  } finally {
    sandbox.restore();
  }
}

describe("reliability: the job tree (src/core) under random operations", function () {
  this.timeout(0);
  it(`each job settles once, cancels visit deepest first, no child left attached at quiescence (${scaled(1000, 100_000)} runs)`, () => {
    const totals: TreeTotals = { runs: 0, jobs: 0, cancels: 0, visits: 0, deadlinesFired: 0, maxDepth: 0 };
    fc.assert(
      fc.property(fc.array(opArbitrary, { minLength: 1, maxLength: 80, size: "medium" }), (ops) => runTree(ops, totals)),
      checkParameters(scaled(1000, 100_000)),
    );
    figure(
      `job trees: ${totals.runs} runs, ${totals.jobs} jobs (depth up to ${totals.maxDepth}), ${totals.cancels} cancels ` +
      `visiting ${totals.visits} jobs, ${totals.deadlinesFired} deadlines fired; violations: 0`,
    );
  });
});
