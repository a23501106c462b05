import assert from "node:assert/strict";
import sinon from "sinon";
import { Job } from "../../src/core/index.js";
import { CallRegistry } from "../../src/rap/index.js";

describe("RAP tool server: the call registry (track, cancel, bounded memory)", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["Date"] });
  });
  afterEach(() => clock.restore());

  it("is idempotent, keys calls by (thread_id, tool_call_id), and forgets a finished call when done", () => {
    const registry = new CallRegistry();
    const call = registry.track("t", "c");
    assert.equal(registry.track("t", "c"), call);
    const elsewhere = registry.track("u", "c");
    assert.notEqual(elsewhere, call);
    assert.equal(registry.cancel("t", "c"), "cancelled");
    assert.equal(elsewhere.signal.aborted, false);
    assert.equal(registry.cancel("t", "c"), "duplicate");
    call.done();
    call.done();
    elsewhere.done();
    assert.equal(registry.size, 0);
    assert.equal(registry.cancel("t", "c"), "already-finished");
    assert.equal(registry.remembered, 2);
  });

  it("an early cancel past rememberMs does not abort a new call (issue 25 item 13)", () => {
    const registry = new CallRegistry({ rememberMs: 300 });
    assert.equal(registry.cancel("t", "c"), "remembered");
    clock.tick(700);
    // track() is the first to look after the window: it must not find the expired cancel.
    assert.equal(registry.track("t", "c").signal.aborted, false);
  });

  it("remembers finished calls and early cancels for a bounded window and count", () => {
    const registry = new CallRegistry({ rememberMs: 1_000, rememberMax: 3 });
    for (let i = 0; i < 5; i++) assert.equal(registry.cancel("t", `early-${i}`), "remembered");
    assert.equal(registry.remembered, 3, "the two oldest were forgotten");
    assert.equal(registry.track("t", "early-0").signal.aborted, false, "forgotten: starts normally");
    assert.equal(registry.track("t", "early-4").signal.aborted, true, "remembered: starts cancelled");
    clock.tick(1_001);
    assert.equal(registry.remembered, 0, "the window passed");
    assert.equal(registry.track("t", "early-3").signal.aborted, false);
  });

  it("a tracked call can hang under a job of any binding, and is cancelled with it", () => {
    const registry = new CallRegistry();
    const request = new Job({ kind: "http-request" });
    const call = registry.track("t", "c", { parent: request });
    request.cancel("shutdown");
    assert.equal(call.signal.aborted, true);
    assert.equal(registry.cancel("t", "c"), "duplicate");
    call.done();
    assert.equal(request.childCount, 0);
  });

  it("done() cancels the work the call left pending under its job (reason internal), like every settled call (issue 36)", () => {
    const registry = new CallRegistry();
    const call = registry.track("t", "c");
    const upstream = new Job({ kind: "upstream fetch" }, call.job);
    call.done();
    assert.equal(call.job.isSettled, true);
    assert.equal(upstream.reason, "internal");
    assert.equal(call.signal.aborted, false, "the call itself finished; it was not cancelled");
  });

  it("refuses invalid ids from the server's own code with a message naming them", () => {
    const registry = new CallRegistry();
    assert.throws(() => registry.track("t", "x".repeat(257)), /tool_call_id must be at most 256 characters/);
    assert.throws(() => registry.track("\u0007", "c"), /thread_id must not contain control characters/);
    assert.equal(registry.size, 0);
  });

  it("cancelAll aborts every call in flight at shutdown, each once", () => {
    const registry = new CallRegistry();
    const calls = [registry.track("t", "a"), registry.track("t", "b")];
    registry.cancel("t", "b");
    assert.equal(registry.cancelAll(), 1, "b was already cancelling");
    for (const call of calls) assert.equal(call.signal.aborted, true);
    for (const call of calls) call.done();
    assert.equal(registry.size, 0);
  });

  it("another principal cannot take over a call in flight: a second track with another owner throws CallOwnedError, the owner's call is untouched", () => {
    const registry = new CallRegistry();
    const alice = registry.track("t", "c", { owner: "alice" });
    assert.throws(
      () => registry.track("t", "c", { owner: "mallory" }),
      (error: unknown) => error instanceof Error && error.name === "CallOwnedError" && /in flight for another principal/.test(error.message),
    );
    assert.throws(() => registry.track("t", "c"), { name: "CallOwnedError" }, "the anonymous principal is another principal");
    assert.equal(registry.track("t", "c", { owner: "alice" }), alice, "the owner gets its own call back");
    assert.equal(registry.size, 1);
    assert.equal(alice.signal.aborted, false);
    assert.equal(registry.cancel("t", "c", "external", "alice"), "cancelled");
    assert.equal(alice.signal.aborted, true);
    alice.done();
    assert.equal(registry.size, 0);
  });

  it("the memory cap is per principal: one principal's flood of early cancels does not push out another's", () => {
    const registry = new CallRegistry({ rememberMax: 100 });
    assert.equal(registry.cancel("t", "victim", "external", "alice"), "remembered");
    for (let i = 0; i < 100; i++) registry.cancel("t", `x${i}`, "external", "mallory");
    assert.equal(registry.remembered, 101);
    assert.equal(registry.track("t", "victim", { owner: "alice" }).signal.aborted, true);
  });

  it("the number of principals remembered is bounded too, the one used longest ago forgotten first", () => {
    const registry = new CallRegistry({ rememberPrincipals: 2 });
    registry.cancel("t", "a", "external", "alice");
    registry.cancel("t", "b", "external", "bob");
    registry.cancel("t", "a2", "external", "alice"); // alice used again: bob is now the oldest
    registry.cancel("t", "c", "external", "carol");
    assert.equal(registry.remembered, 3, "bob's memory went");
    assert.equal(registry.track("t", "b", { owner: "bob" }).signal.aborted, false);
    assert.equal(registry.track("t", "a", { owner: "alice" }).signal.aborted, true);
  });
});
