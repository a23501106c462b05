/**
 * The one call lifecycle (src/core/call.ts): link, deadline, the protocol's cancel once, the
 * grace, settled exactly once, late answers dropped, the cause remembered.
 */
import assert from "node:assert/strict";
import sinon from "sinon";
import { type Call, type CallProtocol, Calls, doomedBy } from "../../src/core/call.js";
import { Job, JobCancelledError } from "../../src/core/index.js";
import { graceCount, settle } from "../support/jobs.js";

describe("Calls: the one call lifecycle", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  });
  afterEach(() => clock.restore());

  function recorder() {
    const log: string[] = [];
    const protocol: CallProtocol<string, string> = {
      sendCancel: (call) => log.push(`cancel ${call.payload} ${call.cause} ${call.origin}`),
      graceEnded: (call) => {
        log.push(`grace ${call.payload}`);
        call.resolve("gave up");
      },
      cleanup: (call) => log.push(`cleanup ${call.payload}`),
    };
    return { log, protocol };
  }

  it("an answer settles the call once; the cleanup runs once; a second answer is dropped", async () => {
    const calls = new Calls<string, string>();
    const { log, protocol } = recorder();
    const call = calls.start("a", {}, protocol) as Call<string, string>;
    assert.equal(calls.size, 1);
    assert.equal(call.resolve("answer"), true);
    assert.equal(call.resolve("late"), false);
    assert.equal(call.reject(new Error("late")), false);
    assert.equal(await call.promise, "answer");
    assert.deepEqual(log, ["cleanup a"]);
    assert.equal(calls.size, 0);
    assert.equal(call.job.state, "settled");
  });

  it("a parent's cancel runs the protocol's cancel once and starts the grace; the grace's end settles it; the late answer is dropped", async () => {
    const calls = new Calls<string, string>({ graceMs: 100 });
    const { log, protocol } = recorder();
    const parent = new Job("turn");
    const call = calls.start("a", { parent }, protocol) as Call<string, string>;
    parent.cancel("session");
    parent.cancel("external");
    assert.deepEqual(log, ["cancel a session parent"]);
    assert.equal(graceCount(calls), 1);
    clock.tick(99);
    assert.equal(call.settled, false);
    clock.tick(1);
    assert.equal(await call.promise, "gave up");
    assert.equal(call.resolve("late answer"), false);
    assert.deepEqual(log, ["cancel a session parent", "grace a", "cleanup a"]);
    assert.equal(calls.size, 0);
    assert.equal(graceCount(calls), 0);
    assert.equal(clock.countTimers(), 0, "no timer outlives the calls");
  });

  it("an answer within the grace stops it", async () => {
    const calls = new Calls<string, string>({ graceMs: 100 });
    const { log, protocol } = recorder();
    const call = calls.start("a", {}, protocol) as Call<string, string>;
    call.cancel("external");
    call.resolve("answered after the cancel");
    assert.equal(graceCount(calls), 0);
    clock.tick(1000);
    assert.deepEqual(log, ["cancel a external call", "cleanup a"]);
    assert.equal(await call.promise, "answered after the cancel");
  });

  it("a signal and a deadline cancel it with their reasons and say which link did", () => {
    const calls = new Calls<string, string>({ graceMs: 100 });
    const { log, protocol } = recorder();
    const stop = new AbortController();
    calls.start("by-signal", { signal: stop.signal }, protocol);
    calls.start("by-deadline", { timeoutMs: 50 }, protocol);
    stop.abort();
    clock.tick(50);
    assert.deepEqual(log, ["cancel by-signal external signal", "cancel by-deadline deadline deadline"]);
  });

  it("a call started under a cancelled grandparent carries the grandparent's cause, not 'internal'", () => {
    const calls = new Calls<string, string>();
    const { log, protocol } = recorder();
    const grandparent = new Job("turn");
    grandparent.cancel("session");
    // Born after the cascade: no reason of its own, and its parent has none either.
    const parent = new Job("handler", grandparent);
    assert.equal(parent.reason, undefined);
    assert.equal(parent.cause, "session");
    assert.equal(doomedBy({ parent }), "session");
    const call = calls.start("late-born", { parent }, protocol) as Call<string, string>;
    assert.equal(call.job.reason, "session");
    assert.deepEqual(log, ["cancel late-born session parent"]);
  });

  it("without graceEnded a cancelled call gets no grace; one the protocol leaves unsettled is rejected with its cause", async () => {
    const calls = new Calls<string, string>({ graceMs: 100 });
    const call = calls.start("no-grace", {}, {}) as Call<string, string>;
    call.cancel("shutdown");
    assert.equal(graceCount(calls), 0);
    const stubborn = calls.start("stubborn", {}, { graceEnded: () => {} }) as Call<string, string>;
    stubborn.cancel("deadline");
    clock.tick(100);
    await assert.rejects(stubborn.promise, (error: unknown) => error instanceof JobCancelledError && error.reason === "deadline");
    call.resolve("x");
  });

  it("keys: one call per key in flight, and settled keys remembered within the bound", () => {
    const calls = new Calls<string, string, string>({ rememberSettled: 2 });
    const a = calls.start("a", {}, {}, "k1") as Call<string, string>;
    assert.equal(calls.start("again", {}, {}, "k1"), undefined);
    assert.equal(calls.get("k1"), a);
    a.resolve("done");
    assert.equal(calls.wasSettled("k1"), true);
    for (const key of ["k2", "k3"]) (calls.start(key, {}, {}, key) as Call<string, string>).resolve("done");
    assert.equal(calls.wasSettled("k1"), false, "the memory is bounded");
    assert.equal(calls.wasSettled("k3"), true);
  });

  it("the signal listener and the parent link are released at settlement", () => {
    const calls = new Calls<string, string>();
    const stop = new AbortController();
    const parent = new Job("turn");
    const call = calls.start("a", { parent, signal: stop.signal }, {}) as Call<string, string>;
    assert.equal(parent.childCount, 1);
    call.resolve("done");
    assert.equal(parent.childCount, 0);
    stop.abort();
    parent.cancel("external");
    assert.equal(call.job.reason, undefined, "a settled call is never cancelled");
  });
});

describe("Job: cause and onCancel", () => {
  it("cause is the reason of the nearest cancelled job on the way up, or undefined", () => {
    const root = new Job("root");
    const child = new Job("child", root);
    assert.equal(child.cause, undefined);
    root.cancel("deadline");
    assert.equal(child.cause, "deadline");
    const own = new Job("own");
    own.cancel("shutdown");
    assert.equal(own.cause, "shutdown");
  });

  it("onCancel runs once, children first; stop keeps it from running; a cancelling job runs it at once; a settled one never", () => {
    const order: string[] = [];
    const root = new Job("root");
    const child = new Job("child", root);
    root.onCancel(() => order.push("root"));
    child.onCancel(() => order.push("child"));
    const stop = root.onCancel(() => order.push("stopped"));
    assert.equal(stop(), true);
    assert.equal(stop(), false);
    root.cancel("external");
    root.cancel("external");
    assert.deepEqual(order, ["child", "root"]);
    root.onCancel(() => order.push("after"));
    assert.deepEqual(order, ["child", "root", "after"]);
    const done = new Job("done");
    settle(done);
    done.onCancel(() => order.push("never"));
    done.cancel("external");
    assert.deepEqual(order, ["child", "root", "after"]);
  });
});
