import assert from "node:assert/strict";
import sinon from "sinon";
import { CANCEL_REASONS, JobCancelledError } from "../../src/core/cancel-reason.js";
import { Job } from "../../src/core/job.js";
import { cancelVisiting, hasDeadline, settle } from "../support/jobs.js";

/** Builds root → (a → (a1, a2), b) and returns the jobs by name. */
function tree() {
  const root = new Job("root");
  const a = new Job("a", root);
  const a1 = new Job("a1", a);
  const a2 = new Job("a2", a);
  const b = new Job("b", root);
  return { root, a, a1, a2, b };
}

describe("JobCancelledError", () => {
  it("is an Error named AbortError carrying the reason", () => {
    const error = new JobCancelledError("deadline");
    assert.ok(error instanceof Error);
    assert.equal(error.name, "AbortError");
    assert.equal(error.code, "ABORT_ERR");
    assert.equal(error.reason, "deadline");
    assert.equal(error.message, "cancelled (deadline)");
  });

  it("CANCEL_REASONS lists every reason once", () => {
    assert.deepEqual([...CANCEL_REASONS], ["external", "session", "deadline", "shutdown", "internal"]);
    assert.equal(new Set(CANCEL_REASONS).size, CANCEL_REASONS.length);
  });
});

describe("Job", () => {
  afterEach(() => {
    sinon.restore();
  });

  describe("construction", () => {
    it("starts running with no reason, no children and no deadline", () => {
      const job = new Job({ n: 1 });
      assert.equal(job.state, "running");
      assert.equal(job.isRunning, true);
      assert.equal(job.isSettled, false);
      assert.equal(job.isDoomed, false);
      assert.equal(job.reason, undefined);
      assert.equal(job.parent, undefined);
      assert.equal(job.childCount, 0);
      assert.equal(job.children.size, 0);
      assert.equal(hasDeadline(job), false);
      assert.deepEqual(job.payload, { n: 1 });
    });

    it("attaches to a running parent", () => {
      const parent = new Job("p");
      const child = new Job("c", parent);
      assert.equal(child.parent, parent);
      assert.equal(parent.childCount, 1);
      assert.ok(parent.children.has(child));
    });

    it("attaches to a cancelling parent (and is doomed from birth)", () => {
      const parent = new Job("p");
      parent.cancel("external");
      const child = new Job("c", parent);
      assert.equal(parent.childCount, 1);
      assert.equal(child.isDoomed, true);
    });

    it("does not attach to a settled parent but keeps the reference", () => {
      const parent = new Job("p");
      settle(parent);
      const child = new Job("c", parent);
      assert.equal(child.parent, parent);
      assert.equal(parent.childCount, 0);
      assert.equal(parent.children.has(child), false);
      assert.equal(child.isDoomed, false);
    });
  });

  describe("cancel", () => {
    it("marks the whole subtree cancelling with the reason", () => {
      const { root, a, a1, a2, b } = tree();
      assert.equal(root.cancel("session"), "cancelled");
      for (const job of [root, a, a1, a2, b]) {
        assert.equal(job.state, "cancelling", String(job.payload));
        assert.equal(job.reason, "session", String(job.payload));
        assert.equal(job.isRunning, false);
        assert.equal(job.isDoomed, true);
      }
    });

    it("cancelling a subtree leaves the parent and siblings running", () => {
      const { root, a, a1, a2, b } = tree();
      assert.equal(a.cancel("internal"), "cancelled");
      assert.equal(root.state, "running");
      assert.equal(root.isDoomed, false);
      assert.equal(b.state, "running");
      assert.equal(b.isDoomed, false);
      for (const job of [a, a1, a2]) assert.equal(job.state, "cancelling");
    });

    it("visits deepest first: children before parents, siblings in creation order", () => {
      const { root } = tree();
      const order: string[] = [];
      cancelVisiting(root, "external", (job) => order.push(job.payload));
      assert.deepEqual(order, ["a1", "a2", "a", "b", "root"]);
    });

    it("visits each job exactly once", () => {
      const { root } = tree();
      const visit = sinon.spy();
      cancelVisiting(root, "external", visit);
      assert.equal(visit.callCount, 5);
      assert.equal(new Set(visit.getCalls().map((call) => call.args[0])).size, 5);
    });

    it("has every ancestor already cancelling when a job is visited", () => {
      const { root } = tree();
      const seen: Array<[string, string[]]> = [];
      cancelVisiting(root, "external", (job) => {
        const ancestors: string[] = [];
        for (let p = job.parent; p !== undefined; p = p.parent) ancestors.push(p.state);
        seen.push([job.payload, ancestors]);
      });
      for (const [name, states] of seen) {
        assert.ok(
          states.every((s) => s === "cancelling"),
          `${name} saw ancestors ${states.join(",")}`,
        );
      }
      // root itself is visited last, after everything below it.
      assert.equal(seen.at(-1)?.[0], "root");
    });

    it("a job created under the parent while its children are visited is already doomed", () => {
      const root = new Job("root");
      const a = new Job("a", root);
      let late: Job<string> | undefined;
      const visited: string[] = [];
      cancelVisiting(root, "shutdown", (job) => {
        visited.push(job.payload);
        if (job === a) {
          assert.equal(root.state, "cancelling");
          late = new Job("late", root);
        }
      });
      assert.ok(late !== undefined);
      assert.equal(late.isDoomed, true);
      assert.equal(root.children.has(late), true);
      // The cascade walks a snapshot of the children, so the late job is doomed but not visited.
      assert.deepEqual(visited, ["a", "root"]);
      assert.equal(late.state, "running");
      assert.equal(late.cancel("shutdown"), "cancelled");
    });

    it("a grandchild created during the visit sees a doomed ancestor through a running parent", () => {
      const root = new Job("root");
      const a = new Job("a", root);
      const other = new Job("other");
      let grandchild: Job<string> | undefined;
      cancelVisiting(root, "external", (job) => {
        if (job === a) grandchild = new Job("gc", new Job("mid", root));
      });
      assert.ok(grandchild !== undefined);
      assert.equal(grandchild.parent?.state, "running");
      assert.equal(grandchild.isDoomed, true);
      assert.equal(other.isDoomed, false);
    });

    it("returns already-cancelled on a second cancel and keeps the first reason", () => {
      const { root } = tree();
      assert.equal(root.cancel("external"), "cancelled");
      const visit = sinon.spy();
      assert.equal(cancelVisiting(root, "deadline", visit), "already-cancelled");
      assert.equal(root.reason, "external");
      assert.equal(visit.callCount, 0);
    });

    it("returns already-settled for a settled job and changes nothing", () => {
      const job = new Job("x");
      settle(job);
      const visit = sinon.spy();
      assert.equal(cancelVisiting(job, "external", visit), "already-settled");
      assert.equal(job.state, "settled");
      assert.equal(job.reason, undefined);
      assert.equal(visit.callCount, 0);
    });

    it("does not re-visit a child that was already cancelling", () => {
      const { root, a } = tree();
      assert.equal(a.cancel("internal"), "cancelled");
      const order: string[] = [];
      assert.equal(
        cancelVisiting(root, "shutdown", (job) => order.push(job.payload)),
        "cancelled",
      );
      assert.deepEqual(order, ["b", "root"]);
      assert.equal(a.reason, "internal");
    });

    it("skips children that already settled (they are detached)", () => {
      const { root, a1, b } = tree();
      settle(a1);
      settle(b);
      const order: string[] = [];
      cancelVisiting(root, "external", (job) => order.push(job.payload));
      assert.deepEqual(order, ["a2", "a", "root"]);
      assert.equal(a1.state, "settled");
      assert.equal(b.state, "settled");
    });

    it("can be cancelled with every reason", () => {
      for (const reason of CANCEL_REASONS) {
        const job = new Job(reason);
        assert.equal(job.cancel(reason), "cancelled");
        assert.equal(job.reason, reason);
      }
    });
  });

  describe("settle", () => {
    it("settles exactly once", () => {
      const job = new Job("x");
      assert.equal(settle(job), true);
      assert.equal(job.state, "settled");
      assert.equal(job.isSettled, true);
      assert.equal(job.isRunning, false);
      assert.equal(settle(job), false);
      assert.equal(job.state, "settled");
    });

    it("settles a cancelling job once, keeping its reason", () => {
      const job = new Job("x");
      job.cancel("deadline");
      assert.equal(settle(job), true);
      assert.equal(job.state, "settled");
      assert.equal(job.reason, "deadline");
      assert.equal(job.isDoomed, false);
      assert.equal(settle(job), false);
    });

    it("detaches from the parent", () => {
      const parent = new Job("p");
      const c1 = new Job("c1", parent);
      const c2 = new Job("c2", parent);
      assert.equal(parent.childCount, 2);
      settle(c1);
      assert.equal(parent.childCount, 1);
      assert.equal(parent.children.has(c1), false);
      assert.equal(parent.children.has(c2), true);
      settle(c1);
      assert.equal(parent.childCount, 1);
      settle(c2);
      assert.equal(parent.childCount, 0);
    });

    it("does not settle or cancel the children", () => {
      const parent = new Job("p");
      const child = new Job("c", parent);
      settle(parent);
      assert.equal(child.state, "running");
      assert.equal(child.isDoomed, false);
    });
  });

  describe("signal", () => {
    function countControllers(): { readonly count: number } {
      const counter = { count: 0 };
      class CountingAbortController extends AbortController {
        constructor() {
          super();
          counter.count++;
        }
      }
      sinon.replace(globalThis, "AbortController", CountingAbortController);
      return counter;
    }

    it("creates no AbortController until the signal is read", () => {
      const counter = countControllers();
      const parent = new Job("p");
      const child = new Job("c", parent);
      parent.cancel("external");
      settle(child);
      settle(parent);
      assert.equal(counter.count, 0);
      void new Job("x").signal;
      assert.equal(counter.count, 1);
    });

    it("returns the same signal on every read", () => {
      const counter = countControllers();
      const job = new Job("x");
      const first = job.signal;
      assert.equal(job.signal, first);
      job.cancel("external");
      assert.equal(job.signal, first);
      assert.equal(counter.count, 1);
    });

    it("is not aborted while running", () => {
      const job = new Job("x");
      assert.equal(job.signal.aborted, false);
    });

    it("read after cancel, is aborted with a JobCancelledError carrying the reason", () => {
      const job = new Job("x");
      job.cancel("deadline");
      const signal = job.signal;
      assert.equal(signal.aborted, true);
      assert.ok(signal.reason instanceof JobCancelledError);
      assert.equal(signal.reason.name, "AbortError");
      assert.equal(signal.reason.reason, "deadline");
      assert.throws(
        () => signal.throwIfAborted(),
        (error: unknown) => error instanceof JobCancelledError && error.reason === "deadline",
      );
    });

    it("read after cancel then settle, is still aborted", () => {
      const job = new Job("x");
      job.cancel("session");
      settle(job);
      assert.equal(job.signal.aborted, true);
      assert.equal((job.signal.reason as JobCancelledError).reason, "session");
    });

    it("read after a plain settle, is not aborted", () => {
      const job = new Job("x");
      settle(job);
      assert.equal(job.signal.aborted, false);
    });

    it("read before cancel, fires abort once when cancelled", () => {
      const job = new Job("x");
      const onAbort = sinon.spy();
      job.signal.addEventListener("abort", onAbort);
      job.cancel("shutdown");
      assert.equal(onAbort.callCount, 1);
      assert.equal(job.signal.aborted, true);
      assert.equal((job.signal.reason as JobCancelledError).reason, "shutdown");
      job.cancel("external");
      assert.equal(onAbort.callCount, 1);
      assert.equal((job.signal.reason as JobCancelledError).reason, "shutdown");
    });

    it("is not aborted by settle", () => {
      const job = new Job("x");
      const signal = job.signal;
      settle(job);
      assert.equal(signal.aborted, false);
    });

    it("cascades: child signals abort before the parent's, with the parent's reason", () => {
      const parent = new Job("p");
      const child = new Job("c", parent);
      const events: string[] = [];
      parent.signal.addEventListener("abort", () => events.push("p"));
      child.signal.addEventListener("abort", () => events.push("c"));
      parent.cancel("external");
      assert.deepEqual(events, ["c", "p"]);
      assert.equal((child.signal.reason as JobCancelledError).reason, "external");
    });

    it("is already aborted when the visitor sees the job", () => {
      const { root } = tree();
      const aborted: boolean[] = [];
      cancelVisiting(root, "external", (job) => aborted.push(job.signal.aborted));
      assert.deepEqual(aborted, [true, true, true, true, true]);
    });
  });

  describe("deadline", () => {
    let clock: sinon.SinonFakeTimers;

    beforeEach(() => {
      clock = sinon.useFakeTimers();
    });

    afterEach(() => {
      clock.restore();
    });

    it("calls onExpire once with the job when the time passes", () => {
      const job = new Job("x");
      const onExpire = sinon.spy();
      job.setDeadline(100, onExpire);
      assert.equal(hasDeadline(job), true);
      clock.tick(99);
      assert.equal(onExpire.callCount, 0);
      clock.tick(1);
      assert.equal(onExpire.callCount, 1);
      assert.equal(onExpire.firstCall.args[0], job);
      assert.equal(hasDeadline(job), false);
      clock.tick(10_000);
      assert.equal(onExpire.callCount, 1);
    });

    it("has no deadline pending while onExpire runs, so expiry can cancel", () => {
      const job = new Job("x");
      let hadDeadline: boolean | undefined;
      job.setDeadline(5, (j) => {
        hadDeadline = hasDeadline(j);
        j.cancel("deadline");
      });
      clock.tick(5);
      assert.equal(hadDeadline, false);
      assert.equal(job.state, "cancelling");
      assert.equal(job.reason, "deadline");
    });

    it("is cleared by cancel", () => {
      const job = new Job("x");
      const onExpire = sinon.spy();
      job.setDeadline(100, onExpire);
      job.cancel("external");
      assert.equal(hasDeadline(job), false);
      assert.equal(clock.countTimers(), 0);
      clock.tick(1000);
      assert.equal(onExpire.callCount, 0);
    });

    it("is cleared on descendants by a cascading cancel", () => {
      const parent = new Job("p");
      const child = new Job("c", parent);
      const onExpire = sinon.spy();
      child.setDeadline(100, onExpire);
      parent.cancel("session");
      assert.equal(hasDeadline(child), false);
      clock.tick(1000);
      assert.equal(onExpire.callCount, 0);
    });

    it("is cleared by settle", () => {
      const job = new Job("x");
      const onExpire = sinon.spy();
      job.setDeadline(100, onExpire);
      settle(job);
      assert.equal(hasDeadline(job), false);
      assert.equal(clock.countTimers(), 0);
      clock.tick(1000);
      assert.equal(onExpire.callCount, 0);
    });

    it("does not fire onExpire if the job stopped running without clearing the timer", () => {
      const job = new Job("x");
      const onExpire = sinon.spy();
      job.setDeadline(100, onExpire);
      Reflect.set(job, "current", "cancelling"); // bypasses cancel()'s clearDeadline
      clock.tick(100);
      assert.equal(onExpire.callCount, 0);
      assert.equal(hasDeadline(job), false);
    });

    it("re-arming replaces the previous deadline", () => {
      const job = new Job("x");
      const first = sinon.spy();
      const second = sinon.spy();
      job.setDeadline(100, first);
      clock.tick(50);
      job.setDeadline(100, second);
      assert.equal(clock.countTimers(), 1);
      clock.tick(60); // t=110: past the first deadline
      assert.equal(first.callCount, 0);
      assert.equal(second.callCount, 0);
      clock.tick(40); // t=150
      assert.equal(first.callCount, 0);
      assert.equal(second.callCount, 1);
    });

    it("re-arming can shorten the deadline", () => {
      const job = new Job("x");
      const first = sinon.spy();
      const second = sinon.spy();
      job.setDeadline(1000, first);
      job.setDeadline(10, second);
      clock.tick(10);
      assert.equal(second.callCount, 1);
      clock.tick(2000);
      assert.equal(first.callCount, 0);
    });

    it("is not armed on a cancelling or settled job", () => {
      const cancelled = new Job("c");
      cancelled.cancel("external");
      const settled = new Job("s");
      settle(settled);
      const onExpire = sinon.spy();
      cancelled.setDeadline(10, onExpire);
      settled.setDeadline(10, onExpire);
      assert.equal(hasDeadline(cancelled), false);
      assert.equal(hasDeadline(settled), false);
      assert.equal(clock.countTimers(), 0);
      clock.tick(100);
      assert.equal(onExpire.callCount, 0);
    });

    it("a zero deadline fires on the next timer turn, not synchronously", () => {
      const job = new Job("x");
      const onExpire = sinon.spy();
      job.setDeadline(0, onExpire);
      assert.equal(onExpire.callCount, 0);
      clock.tick(0);
      assert.equal(onExpire.callCount, 1);
    });
  });
});

describe("Job deadline timer (real timers)", () => {
  it("unrefs its timer so a pending deadline does not keep the process alive", () => {
    const job = new Job("x");
    const setTimeoutSpy = sinon.spy(globalThis, "setTimeout");
    try {
      job.setDeadline(60_000, () => {});
      const timer = setTimeoutSpy.firstCall.returnValue as NodeJS.Timeout;
      assert.equal(timer.hasRef(), false);
    } finally {
      setTimeoutSpy.restore();
      settle(job);
    }
  });
});
