import assert from "node:assert/strict";
import { ConformanceTracker, assertConformance, schemaProblem } from "../support/schema-validator.js";

const prompt = { jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } };

describe("the suite's schema assertion (official ACP schemas from the SDK)", () => {
  it("v2: a prompt's result is {messageId}; {stopReason: 'cancelled'} is rejected", () => {
    assert.equal(schemaProblem(2, { jsonrpc: "2.0", id: 7, result: { messageId: "m1" } }, "session/prompt"), undefined);
    assert.match(
      schemaProblem(2, { jsonrpc: "2.0", id: 7, result: { stopReason: "cancelled" } }, "session/prompt") ?? "",
      /messageId/,
    );
  });

  it("v1: {stopReason: 'cancelled'} is the prompt's cancelled result; {messageId} alone is rejected", () => {
    assert.equal(schemaProblem(1, { jsonrpc: "2.0", id: 7, result: { stopReason: "cancelled" } }, "session/prompt"), undefined);
    assert.notEqual(schemaProblem(1, { jsonrpc: "2.0", id: 7, result: { messageId: "m1" } }, "session/prompt"), undefined);
  });

  it("checks requests, notifications and error objects, and leaves extension methods alone", () => {
    assert.equal(schemaProblem(2, prompt), undefined);
    assert.notEqual(schemaProblem(2, { ...prompt, params: { sessionId: "s" } }), undefined);
    assert.notEqual(schemaProblem(1, { jsonrpc: "2.0", method: "$/cancel_request", params: {} }), undefined);
    assert.notEqual(schemaProblem(2, { jsonrpc: "2.0", id: 1, error: { code: "x", message: "m" } }), undefined);
    assert.equal(schemaProblem(2, { jsonrpc: "2.0", id: 1, error: { code: -32800, message: "m", data: { reason: "session" } } }), undefined);
    assert.equal(schemaProblem(2, { jsonrpc: "2.0", id: 1, method: "_test/anything", params: 5 }), undefined);
  });

  it("a tracker learns the version from the initialize answer and the method of each answer, and fails the test naming the first invalid message", () => {
    const tracker = new ConformanceTracker("unit");
    tracker.see("a", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 2, info: { name: "e", version: "1" } } });
    tracker.see("b", { jsonrpc: "2.0", id: 0, result: { protocolVersion: 2, info: { name: "a", version: "1" } } });
    tracker.see("a", prompt);
    assert.equal(tracker.firstProblem, undefined);
    tracker.see("b", { jsonrpc: "2.0", id: 7, result: { stopReason: "cancelled" } });
    assert.match(tracker.firstProblem ?? "", /invalid ACP v2 message .*stopReason/);
    assert.throws(() => assertConformance(), /invalid ACP v2 message/);
    assert.doesNotThrow(() => assertConformance(), "each failure is reported once");
  });
});
