import assert from "node:assert/strict";
import { type AnyJob, bindHandlerJob, jobOf } from "../../src/core/index.js";
import { WaitingJob, settle } from "../support/jobs.js";

describe("Job.onChildrenSettled (structured waiting across bindings)", () => {
  it("fires once, with the last child, when the last attached child settles", () => {
    const parent = new WaitingJob("turn");
    const a = new WaitingJob("mcp call", parent);
    const b = new WaitingJob("rap call", parent);
    const calls: AnyJob[] = [];
    parent.onLast = (last) => calls.push(last);
    settle(a);
    assert.deepEqual(calls, [], "one child is still out");
    settle(b);
    assert.deepEqual(calls, [b]);
    settle(b);
    assert.deepEqual(calls, [b], "a second settle is not a second departure");
  });

  it("fires again when children born later all leave again", () => {
    const parent = new WaitingJob("turn");
    const calls: string[] = [];
    parent.onLast = (last) => calls.push(last.payload as string);
    settle(new WaitingJob("first", parent));
    const second = new WaitingJob("second", parent);
    const third = new WaitingJob("third", parent);
    settle(third);
    settle(second);
    assert.deepEqual(calls, ["first", "second"]);
  });

  it("is not called for a grandchild, only for the job whose own children left", () => {
    const root = new WaitingJob("root");
    const middle = new WaitingJob("middle", root);
    const leaf = new WaitingJob("leaf", middle);
    const seen: string[] = [];
    root.onLast = (last) => seen.push(`root<-${String(last.payload)}`);
    middle.onLast = (last) => seen.push(`middle<-${String(last.payload)}`);
    settle(leaf);
    assert.deepEqual(seen, ["middle<-leaf"]);
    settle(middle);
    assert.deepEqual(seen, ["middle<-leaf", "root<-middle"]);
  });

  it("a child born under a settled parent never attaches, so never fires the hook", () => {
    const parent = new WaitingJob("turn");
    let calls = 0;
    parent.onLast = () => calls++;
    settle(parent);
    settle(new WaitingJob("late", parent));
    assert.equal(calls, 0);
  });

  it("works across a cancel: children cancelled with the parent settle later through their own binding", () => {
    const parent = new WaitingJob("turn");
    const children = [new WaitingJob("a", parent), new WaitingJob("b", parent), new WaitingJob("c", parent)];
    let released = false;
    parent.cancel("session");
    parent.onLast = () => {
      released = true;
    };
    for (const child of children) {
      assert.equal(child.state, "cancelling");
      assert.equal(released, false);
      settle(child);
    }
    assert.equal(released, true);
    assert.equal(parent.childCount, 0);
  });
});

describe("jobOf (the seam between bindings)", () => {
  it("finds the job a handler scope bound to its context's signal, by context or by signal", () => {
    const job = new WaitingJob("request");
    const controller = new AbortController();
    const ctx = { signal: controller.signal, params: {} };
    assert.equal(jobOf(ctx), undefined, "nothing bound yet");
    bindHandlerJob(controller.signal, job);
    assert.equal(jobOf(ctx), job);
    assert.equal(jobOf(controller.signal), job);
    assert.equal(jobOf({ signal: new AbortController().signal }), undefined, "another request's context");
    assert.equal(jobOf({}), undefined);
    assert.equal(jobOf(undefined), undefined);
  });
});
