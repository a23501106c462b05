import assert from "node:assert/strict";
import sinon from "sinon";
import { GraceTimers } from "../../src/core/index.js";
import { inGrace } from "../support/jobs.js";

describe("GraceTimers (one timer for every grace period)", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  });
  afterEach(() => clock.restore());

  it("expires items in the order they started, each after the grace period, with one timer", () => {
    const expired: string[] = [];
    const grace = new GraceTimers<string>(100, (item) => expired.push(item));
    grace.start("a");
    clock.tick(30);
    grace.start("b");
    grace.start("c");
    assert.equal(clock.countTimers(), 1);
    clock.tick(69);
    assert.deepEqual(expired, []);
    clock.tick(1);
    assert.deepEqual(expired, ["a"]);
    clock.tick(29);
    assert.deepEqual(expired, ["a"]);
    clock.tick(1);
    assert.deepEqual(expired, ["a", "b", "c"]);
    assert.equal(clock.countTimers(), 0);
    assert.equal(inGrace(grace).size, 0);
  });

  it("a stopped item never expires, and stopping the last one clears the timer", () => {
    const expired: string[] = [];
    const grace = new GraceTimers<string>(100, (item) => expired.push(item));
    grace.start("a");
    grace.start("b");
    grace.stop("a");
    assert.equal(clock.countTimers(), 1);
    grace.stop("b");
    assert.equal(clock.countTimers(), 0, "no timer outlives the work");
    clock.tick(1000);
    assert.deepEqual(expired, []);
  });

  it("a second start keeps the first deadline; an item started while expiring waits its full period", () => {
    const expired: string[] = [];
    const grace: GraceTimers<string> = new GraceTimers<string>(100, (item) => {
      expired.push(item);
      if (item === "a") grace.start("late");
    });
    grace.start("a");
    clock.tick(50);
    grace.start("a");
    clock.tick(50);
    assert.deepEqual(expired, ["a"]);
    clock.tick(99);
    assert.deepEqual(expired, ["a"]);
    clock.tick(1);
    assert.deepEqual(expired, ["a", "late"]);
    assert.equal(clock.countTimers(), 0);
  });

  it("items started together from one reading of the clock (startedAt) end together", () => {
    const expired: string[] = [];
    const grace = new GraceTimers<string>(100, (item) => expired.push(item));
    const at = Date.now();
    clock.tick(40);
    grace.start("a", at);
    grace.start("b", at);
    assert.equal(inGrace(grace).has("a"), true);
    clock.tick(59);
    assert.deepEqual(expired, []);
    clock.tick(1);
    assert.deepEqual(expired, ["a", "b"]);
    assert.equal(inGrace(grace).has("a"), false);
  });

  // Its one timer (it was a SharedTimer class of its own).
  it("fires once when due, and a period started in the past ends on the next timer turn", () => {
    const expired: string[] = [];
    const grace = new GraceTimers<string>(50, (item) => expired.push(item));
    grace.start("a");
    clock.tick(49);
    assert.deepEqual(expired, []);
    clock.tick(1);
    assert.deepEqual(expired, ["a"]);
    clock.tick(1000);
    assert.deepEqual(expired, ["a"]);
    grace.start("b", Date.now() - 500);
    clock.tick(0);
    assert.deepEqual(expired, ["a", "b"]);
    assert.equal(clock.countTimers(), 0);
  });

  it("a cleared grace never fires", () => {
    let fired = 0;
    const grace = new GraceTimers<string>(10, () => fired++);
    grace.start("a");
    grace.clear();
    assert.equal(clock.countTimers(), 0);
    clock.tick(100);
    assert.equal(fired, 0);
  });
});
