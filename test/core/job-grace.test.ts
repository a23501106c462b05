import assert from "node:assert/strict";
import sinon from "sinon";
import { type AnyJob, Job, JobGrace } from "../../src/core/index.js";

describe("JobGrace (grace periods kept on the jobs, one timer)", () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  });
  afterEach(() => clock.restore());

  const job = (name: string) => new Job(name);
  const names = (jobs: AnyJob[]) => jobs.map((j) => j.payload as string);

  it("expires jobs in the order they started, each after the grace period, with one timer", () => {
    const expired: AnyJob[] = [];
    const grace = new JobGrace<AnyJob>(100, (j) => expired.push(j));
    const [a, b, c] = [job("a"), job("b"), job("c")];
    grace.start(a);
    clock.tick(30);
    grace.start(b);
    grace.start(c);
    assert.equal(clock.countTimers(), 1);
    clock.tick(69);
    assert.deepEqual(names(expired), []);
    clock.tick(1);
    assert.deepEqual(names(expired), ["a"]);
    clock.tick(29);
    assert.deepEqual(names(expired), ["a"]);
    clock.tick(1);
    assert.deepEqual(names(expired), ["a", "b", "c"]);
    assert.equal(clock.countTimers(), 0);
    assert.equal(grace.size, 0);
    assert.equal(a.graceTicket, 0);
  });

  it("a period started from an earlier clock reading ends that much earlier", () => {
    const expired: AnyJob[] = [];
    const grace = new JobGrace<AnyJob>(100, (j) => expired.push(j));
    const startedAt = Date.now();
    clock.tick(10);
    grace.start(job("a"), startedAt);
    clock.tick(90);
    assert.deepEqual(names(expired), ["a"]);
  });

  it("a stopped job never expires, and stopping the last one clears the timer", () => {
    const expired: AnyJob[] = [];
    const grace = new JobGrace<AnyJob>(100, (j) => expired.push(j));
    const [a, b] = [job("a"), job("b")];
    grace.start(a);
    grace.start(b);
    grace.stop(a);
    grace.stop(a);
    assert.equal(grace.size, 1);
    assert.equal(clock.countTimers(), 1);
    grace.stop(b);
    assert.equal(clock.countTimers(), 0, "no timer outlives the work");
    clock.tick(1000);
    assert.deepEqual(names(expired), []);
  });

  it("a job stopped and started again waits its new period, and the one queued behind it ends on time", () => {
    const expired: AnyJob[] = [];
    const grace = new JobGrace<AnyJob>(100, (j) => expired.push(j));
    const [a, b] = [job("a"), job("b")];
    grace.start(a);
    clock.tick(10);
    grace.start(b);
    clock.tick(10);
    grace.stop(a);
    grace.start(a);
    clock.tick(90);
    assert.deepEqual(names(expired), ["b"], "b ends at 110 although a's dead entry is ahead of it");
    clock.tick(9);
    assert.deepEqual(names(expired), ["b"]);
    clock.tick(1);
    assert.deepEqual(names(expired), ["b", "a"]);
    assert.equal(grace.size, 0);
    assert.equal(clock.countTimers(), 0);
  });

  it("a second start keeps the first deadline; a job started while expiring waits its full period", () => {
    const expired: AnyJob[] = [];
    const late = job("late");
    const grace: JobGrace<AnyJob> = new JobGrace<AnyJob>(100, (j) => {
      expired.push(j);
      if (j.payload === "a") grace.start(late);
    });
    const a = job("a");
    grace.start(a);
    clock.tick(50);
    grace.start(a);
    clock.tick(50);
    assert.deepEqual(names(expired), ["a"]);
    clock.tick(99);
    assert.deepEqual(names(expired), ["a"]);
    clock.tick(1);
    assert.deepEqual(names(expired), ["a", "late"]);
    assert.equal(clock.countTimers(), 0);
  });

  it("expiring one job may stop the others (a subtree answered at once)", () => {
    const expired: AnyJob[] = [];
    const jobs = [job("root"), job("x"), job("y")];
    const grace: JobGrace<AnyJob> = new JobGrace<AnyJob>(100, (j) => {
      expired.push(j);
      for (const other of jobs) grace.stop(other);
    });
    for (const j of jobs) grace.start(j);
    clock.tick(100);
    assert.deepEqual(names(expired), ["root"]);
    assert.equal(grace.size, 0);
    assert.equal(clock.countTimers(), 0);
  });

  it("keeps its queue bounded when many periods start and stop while one stays open", () => {
    const grace = new JobGrace<AnyJob>(100, () => undefined);
    const keeper = job("keeper");
    grace.start(keeper);
    for (let round = 0; round < 5; round++) {
      const batch = Array.from({ length: 1000 }, (_, i) => job(`j${i}`));
      for (const j of batch) grace.start(j);
      for (const j of batch) grace.stop(j);
      clock.tick(30);
    }
    assert.equal(grace.size, 0, "the keeper expired at 100");
    assert.equal(clock.countTimers(), 0);
  });
});
