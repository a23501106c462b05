/**
 * The serving side of the one lifecycle (src/core/server-calls.ts): a served call is a job under its
 * parent, cancelled by its owner alone, answered once, settled once (cancelling the work left pending
 * under it), with one grace for all and a bounded memory of settled keys and early cancels.
 */
import assert from "node:assert/strict";
import sinon from "sinon";
import { type ServerCallProtocol, ServerCalls } from "../../src/core/server-calls.js";
import { Job } from "../../src/core/index.js";
import { settle } from "../support/jobs.js";

/** A test call: its key (unkeyed when absent) and its owner. */
type Served = { key?: string; owner?: string };
type Protocol = ServerCallProtocol<string, Served, string>;
const served = (overrides: Partial<Protocol> = {}): Protocol => ({
  keyOf: (call) => call.key,
  ownerOf: (call) => call.owner ?? "",
  ...overrides,
});

describe("ServerCalls: the serving side of the one lifecycle", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  });
  afterEach(() => clock.restore());

  it("settling a call cancels the children it left pending (reason internal), not the settled ones", () => {
    const calls = new ServerCalls(served());
    const parent = new Job("request");
    const call = calls.start({ key: "a" }, parent) as Job<Served>;
    assert.equal(call.parent, parent);
    const finished = new Job("finished", call);
    const pending = new Job("pending", call);
    const grandchild = new Job("grandchild", pending);
    settle(finished);
    calls.done(call);
    assert.equal(finished.reason, undefined);
    assert.equal(pending.reason, "internal");
    assert.equal(grandchild.cause, "internal");
    assert.equal(call.isSettled, true);
    assert.equal(parent.childCount, 0, "the parent's wait for its child ended");
    assert.equal(calls.size, 0);
  });

  it("answers once: of racing answers (work, cancel, grace) only the first is sent; done settles once", () => {
    const sent: string[] = [];
    const settled: string[] = [];
    const protocol = served({
      // A binding's grace answers for the work itself; the call then settles.
      graceEnded: () => void sent.push("grace"),
      settled: (call) => settled.push(call.payload.key ?? ""),
    });
    const calls = new ServerCalls(protocol, { grace: 100 });
    const call = calls.start({ key: "a" }) as Job<Served>;
    assert.equal(calls.cancel("a", "external"), "cancelled");
    assert.equal(calls.cancel("a", "external"), "duplicate");
    clock.tick(100);
    assert.deepEqual(sent, ["grace"]);
    // The work's own answer and done arrive after the grace answered for it: dropped, no second settle.
    assert.equal(calls.answer(call, "work"), false);
    calls.done(call);
    calls.done(call);
    assert.deepEqual(settled, ["a"]);
    assert.equal(calls.size, 0);
    assert.equal(calls.cancel("a", "external"), "unknown", "no memory configured");
  });

  it("work that answers within the grace stops it: no grace answer, no timer left", () => {
    let graceAnswers = 0;
    const calls = new ServerCalls(served({ graceEnded: () => String(graceAnswers++) }), { grace: 100 });
    const call = calls.start({ key: "a" }) as Job<Served>;
    call.cancel("external");
    assert.equal(calls.answer(call, "work"), true);
    assert.equal(calls.answer(call, "again"), false, "answered once");
    calls.done(call);
    assert.equal(clock.countTimers(), 0);
    clock.tick(200);
    assert.equal(graceAnswers, 0);
  });

  it("a key in flight is refused; only its owner's cancel reaches it; an early cancel makes the call start cancelled", () => {
    const calls = new ServerCalls(served(), { rememberMax: 10, rememberOwners: 4, earlyCancels: true });
    const alice = calls.start({ key: "k", owner: "alice" }) as Job<Served>;
    assert.equal(calls.start({ key: "k", owner: "alice" }), undefined);
    assert.equal(calls.cancel("k", "external", "bob"), "not-owner");
    assert.equal(alice.reason, undefined);
    calls.done(alice);
    assert.equal(calls.cancel("k", "external", "alice"), "already-finished");
    assert.equal(calls.cancel("k", "external", "bob"), "remembered", "bob's memory is his own");
    assert.equal(calls.start({ key: "k", owner: "alice" })?.reason, undefined);
    assert.equal(calls.start({ key: "j", owner: "bob" })?.reason, undefined);
    calls.done(calls.get("k") as Job<Served>);
    assert.equal(calls.start({ key: "k", owner: "bob" })?.reason, "external");
  });

  it("the memory is bounded: per owner by count and window, and by the number of owners", () => {
    const calls = new ServerCalls(served(), { rememberMax: 3, rememberMs: 1_000, rememberOwners: 2 });
    for (let i = 0; i < 5; i++) calls.done(calls.start({ key: `done-${i}` }) as Job<Served>);
    assert.equal(calls.remembered, 3, "the two oldest were forgotten");
    assert.equal(calls.cancel("done-0", "external"), "unknown");
    assert.equal(calls.cancel("done-4", "external"), "already-finished");
    calls.done(calls.start({ key: "a", owner: "a" }) as Job<Served>);
    calls.done(calls.start({ key: "b", owner: "b" }) as Job<Served>);
    assert.equal(calls.remembered, 2, "a third owner pushed out the least recently used one");
    assert.equal(calls.cancel("done-4", "external"), "unknown");
    clock.tick(1_001);
    assert.equal(calls.remembered, 0, "the window passed");
    assert.equal(calls.cancel("b", "external", "b"), "unknown");
  });

  it("unkeyed calls are each their own entry; cancelAll cancels those in flight, each once", () => {
    const calls = new ServerCalls(served());
    const one = calls.start({}) as Job<Served>;
    const two = calls.start({}) as Job<Served>;
    assert.equal(calls.size, 2);
    one.cancel("external");
    assert.equal(calls.cancelAll("shutdown"), 1);
    assert.equal(one.reason, "external");
    assert.equal(two.reason, "shutdown");
    calls.done(one);
    calls.done(two);
    assert.equal(calls.size, 0);
  });

  it("null is a key like any other (JSON-RPC allows id null): found, refused twice, cancelled and settled by it", () => {
    const calls = new ServerCalls<string | null, { key: string | null }>({ keyOf: (call) => call.key, ownerOf: () => "" });
    const call = calls.start({ key: null }) as Job<{ key: string | null }>;
    assert.equal(calls.get(null), call);
    assert.equal(calls.start({ key: null }), undefined, "a second null id in flight is refused");
    assert.equal(calls.cancel(null, "external"), "cancelled");
    calls.done(call);
    assert.equal(calls.get(null), undefined);
    assert.equal(calls.size, 0);
  });
});
