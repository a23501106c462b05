import assert from "node:assert/strict";
import { jobOf } from "../../src/index.js";
import type { ToolCall, TrackedCall } from "../../src/rap/index.js";
import { bindHandlerJob, Job } from "../../src/core/index.js";

// What a user holds of a job (from jobOf, ToolCall.job, TrackedCall.job) can be cancelled, watched
// and parented on, never settled or rewritten: the `@ts-expect-error` lines below fail the test
// build the day any of them compiles.

type UserJob = NonNullable<ReturnType<typeof jobOf>> | ToolCall["job"] | TrackedCall["job"];

function tamper(job: UserJob): void {
  // @ts-expect-error settling belongs to the lifecycle that owns the job
  job.settle();
  // @ts-expect-error a user cannot move a job's state
  job.state = "settled";
  // @ts-expect-error nor rewrite why it was cancelled
  job.reason = "external";
}

function use(job: UserJob): void {
  const child = new Job("the user's own work", job);
  job.onCancel(() => {});
  assert.equal(job.signal.aborted, false);
  assert.equal(job.cancel("external"), "cancelled");
  assert.equal(child.cause, "external");
}

describe("a user's job is sealed", () => {
  it("can be cancelled, watched and parented on; settling or writing its state fails to compile and throws", () => {
    const signal = new AbortController().signal;
    bindHandlerJob(signal, new Job("a handler's request"));
    const job = jobOf(signal);
    assert.ok(job !== undefined);
    assert.throws(() => tamper(job), TypeError);
    assert.equal(job.state, "running");
    use(job);
    assert.equal(job.state, "cancelling");
    assert.equal(job.reason, "external");
  });
});
