import assert from "node:assert/strict";
import { type AnyJob, bindHandlerJob, Job, jobOf } from "../../src/core/index.js";

describe("Job.onChildrenSettled (structured waiting across bindings)", () => {
  it("fires once, with the last child, when the last attached child settles", () => {
    const parent = new Job("turn");
    const a = new Job("mcp call", parent);
    const b = new Job("rap call", parent);
    const calls: AnyJob[] = [];
    parent.onChildrenSettled = (last) => calls.push(last);
    a.settle();
    assert.deepEqual(calls, [], "one child is still out");
    b.settle();
    assert.deepEqual(calls, [b]);
    b.settle();
    assert.deepEqual(calls, [b], "a second settle is not a second departure");
  });

  it("fires again when children born later all leave again", () => {
    const parent = new Job("turn");
    const calls: string[] = [];
    parent.onChildrenSettled = (last) => calls.push(last.payload as string);
    new Job("first", parent).settle();
    const second = new Job("second", parent);
    const third = new Job("third", parent);
    third.settle();
    second.settle();
    assert.deepEqual(calls, ["first", "second"]);
  });

  it("is not called for a grandchild, only for the job whose own children left", () => {
    const root = new Job("root");
    const middle = new Job("middle", root);
    const leaf = new Job("leaf", middle);
    const seen: string[] = [];
    root.onChildrenSettled = (last) => seen.push(`root<-${String(last.payload)}`);
    middle.onChildrenSettled = (last) => seen.push(`middle<-${String(last.payload)}`);
    leaf.settle();
    assert.deepEqual(seen, ["middle<-leaf"]);
    middle.settle();
    assert.deepEqual(seen, ["middle<-leaf", "root<-middle"]);
  });

  it("a child born under a settled parent never attaches, so never fires the hook", () => {
    const parent = new Job("turn");
    let calls = 0;
    parent.onChildrenSettled = () => calls++;
    parent.settle();
    new Job("late", parent).settle();
    assert.equal(calls, 0);
  });

  it("works across a cancel: children cancelled with the parent settle later through their own binding", () => {
    const parent = new Job("turn");
    const children = [new Job("a", parent), new Job("b", parent), new Job("c", parent)];
    let released = false;
    parent.cancel("session");
    parent.onChildrenSettled = () => {
      released = true;
    };
    for (const child of children) {
      assert.equal(child.state, "cancelling");
      assert.equal(released, false);
      child.settle();
    }
    assert.equal(released, true);
    assert.equal(parent.childCount, 0);
  });
});

describe("jobOf (the seam between bindings)", () => {
  it("finds the job a handler scope bound to its context's signal, by context or by signal", () => {
    const job = new Job("request");
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
