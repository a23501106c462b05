import assert from "node:assert/strict";
import sinon from "sinon";
import { SharedTimer } from "../../src/core/shared-timer.js";

describe("SharedTimer", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => clock.restore());

  it("fires once when due, and is no longer armed when its owner runs", () => {
    const seen: boolean[] = [];
    const timer: SharedTimer = new SharedTimer(() => seen.push(timer.armed));
    timer.arm(50);
    assert.equal(timer.armed, true);
    clock.tick(49);
    assert.deepEqual(seen, []);
    clock.tick(1);
    assert.deepEqual(seen, [false]);
    clock.tick(1000);
    assert.deepEqual(seen, [false]);
  });

  it("a cleared timer never fires; a negative delay fires on the next timer turn", () => {
    let fired = 0;
    const timer = new SharedTimer(() => fired++);
    timer.arm(10);
    timer.clear();
    assert.equal(timer.armed, false);
    clock.tick(100);
    assert.equal(fired, 0);
    timer.arm(-5);
    clock.tick(0);
    assert.equal(fired, 1);
  });
});
