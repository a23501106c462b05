/**
 * The lifecycle survives throwing hooks and listeners (review D2) and refuses timer durations
 * setTimeout cannot wait (review D6): every call still settles, every sibling is still
 * cancelled, and what was thrown is reported (rethrown in a microtask), not lost.
 */
import assert from "node:assert/strict";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type Call, type CallProtocol, Calls } from "../../src/core/call.js";
import { GraceTimers, Job, JobCancelledError } from "../../src/core/index.js";
import { withReports } from "./report-capture.js";
import { graceCount, hasDeadline, inGrace, settle } from "../support/jobs.js";

/** "pending" when the promise has no answer after the microtasks and one macrotask ran. */
async function stateOf(promise: Promise<unknown>): Promise<string> {
  let state = "pending";
  promise.then(
    () => (state = "resolved"),
    (error: unknown) => (state = `rejected ${error instanceof JobCancelledError ? error.reason : String(error)}`),
  );
  await nextTurn();
  return state;
}

const settlesOnCancel: CallProtocol<string, string> = {
  sendCancel: (call) => call.reject(new JobCancelledError(call.cause ?? "internal")),
};

describe("Lifecycle: throwing hooks and listeners", () => {
  it("a throwing sendCancel does not stop the cascade: the sibling is cancelled, the signal aborts, the thrower settles after its grace", async () => {
    const calls = new Calls<string, string>({ graceMs: 1 });
    const parent = new Job("turn");
    const throwing = calls.start("a", { parent }, {
      sendCancel: () => {
        throw new Error("send failed");
      },
      graceEnded: (call) => call.reject(new Error("grace ended")),
    }) as Call<string, string>;
    const sibling = calls.start("b", { parent }, settlesOnCancel) as Call<string, string>;
    const parentSignal = parent.signal;
    let effect: unknown;
    const reported = await withReports(() => {
      effect = parent.cancel("external");
    });
    assert.equal(effect, "cancelled");
    assert.equal(await stateOf(sibling.promise), "rejected external");
    assert.equal(parentSignal.aborted, true);
    assert.equal(parent.cancel("external"), "already-cancelled");
    assert.deepEqual(reported.map((e) => (e as Error).message), ["send failed"]);
    throwing.endGrace();
    assert.equal(await stateOf(throwing.promise), "rejected Error: grace ended");
    assert.equal(calls.size, 0);
  });

  it("errors of several hooks are reported together as one AggregateError, after every hook ran", async () => {
    const job = new Job("j");
    const ran: string[] = [];
    job.onCancel(() => {
      ran.push("first");
      throw new Error("one");
    });
    job.onCancel(() => {
      ran.push("second");
      throw new Error("two");
    });
    const reported = await withReports(() => void job.cancel("session"));
    assert.deepEqual(ran, ["first", "second"]);
    assert.equal(reported.length, 1);
    assert.ok(reported[0] instanceof AggregateError);
    assert.deepEqual((reported[0] as AggregateError).errors.map((e: Error) => e.message), ["one", "two"]);
  });

  it("a throwing cleanup does not leave the promise pending; the call settles once and leaves its table", async () => {
    const calls = new Calls<string, string>();
    const call = calls.start("a", {}, {
      cleanup: () => {
        throw new Error("cleanup failed");
      },
    }) as Call<string, string>;
    let returned: unknown;
    const reported = await withReports(() => {
      returned = call.resolve("answer");
    });
    assert.equal(returned, true);
    assert.equal(await stateOf(call.promise), "resolved");
    assert.equal(call.resolve("again"), false);
    assert.equal(calls.size, 0);
    assert.deepEqual(reported.map((e) => (e as Error).message), ["cleanup failed"]);
  });

  it("a throwing graceEnded still settles the call with the cancelled error of its cause", async () => {
    const calls = new Calls<string, string>({ graceMs: 1 });
    const call = calls.start("a", {}, {
      sendCancel: () => {},
      graceEnded: () => {
        throw new Error("graceEnded failed");
      },
    }) as Call<string, string>;
    call.cancel("deadline");
    const reported = await withReports(() => call.endGrace());
    assert.equal(await stateOf(call.promise), "rejected deadline");
    assert.deepEqual(reported.map((e) => (e as Error).message), ["graceEnded failed"]);
    assert.equal(calls.size, 0);
    assert.equal(graceCount(calls), 0);
  });

  it("a grace expiry that throws does not keep the periods after it from ending", async () => {
    const ended: string[] = [];
    const grace = new GraceTimers<string>(0, (item) => {
      ended.push(item);
      if (item === "first") throw new Error("expiry failed");
    });
    const reported = await withReports(async () => {
      const started = Date.now();
      grace.start("first", started);
      grace.start("second", started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    assert.deepEqual(ended, ["first", "second"]);
    assert.equal(inGrace(grace).size, 0);
    assert.deepEqual(reported.map((e) => (e as Error).message), ["expiry failed"]);
  });

  it("a call that settles cancels its pending child calls with reason 'internal'", async () => {
    const calls = new Calls<string, string>();
    const parent = calls.start("parent", {}, settlesOnCancel) as Call<string, string>;
    const child = calls.start("child", { parent: parent.job }, settlesOnCancel) as Call<string, string>;
    parent.resolve("done");
    assert.equal(await stateOf(child.promise), "rejected internal");
    assert.equal(child.origin, "parent");
    assert.equal(calls.size, 0);
  });
});

describe("Timers: durations setTimeout cannot wait", () => {
  const max = 2_147_483_647;
  it("Job.setDeadline refuses more than 2^31-1 ms, negatives and non-finite values, naming the maximum", () => {
    const job = new Job("j");
    for (const bad of [max + 1, 1e12, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const namesMax = (error: unknown) => error instanceof RangeError && error.message.includes(String(max));
      assert.throws(() => job.setDeadline(bad, () => {}), namesMax);
    }
    assert.equal(hasDeadline(job), false);
    job.setDeadline(max, () => {});
    assert.equal(hasDeadline(job), true);
    settle(job);
  });

  it("GraceTimers and Calls refuse a grace above the maximum; Calls.start refuses such a timeoutMs and tracks nothing", () => {
    assert.throws(() => new GraceTimers(1e12, () => {}), RangeError);
    assert.throws(() => new Calls({ graceMs: max + 1 }), RangeError);
    const calls = new Calls<string, string>();
    assert.throws(() => calls.start("a", { timeoutMs: 2 ** 31 }, {}), /timeoutMs.*2147483647/);
    assert.equal(calls.size, 0);
  });

  it("GraceTimers refuses a period that would end beyond the maximum delay, and arms no timer", () => {
    const grace = new GraceTimers<string>(10, () => {});
    assert.throws(() => grace.start("a", Date.now() + max), RangeError);
    grace.stop("a");
    assert.equal(inGrace(grace).size, 0);
  });
});
