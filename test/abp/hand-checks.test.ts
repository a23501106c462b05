import { strict as assert } from "node:assert";
import { LIMITS } from "../../src/abp/app/protocol.js";
import { CallResultSchema, EnvelopeSchema, isExactEnvelope, isPlainCallResult } from "../../src/abp/schemas.js";

/** A hand check may only say yes where its schema accepts the value and gives it back unchanged. */
function agreesWithSchema(value: unknown, schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }) {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `the hand check accepted what the schema refuses: ${JSON.stringify(value)}`);
  assert.deepEqual(parsed.data, value, `the schema would have changed ${JSON.stringify(value)}`);
}

const envelope = { type: "capabilities/call-result", id: "e-1", timestamp: 1_700_000_000_000, payload: { success: true } };

describe("ABP hand checks agree with the zod schemas", () => {
  it("isExactEnvelope: says yes to the usual envelopes, and only where EnvelopeSchema agrees", () => {
    const usual = [envelope, { ...envelope, id: undefined }, { type: "notification", timestamp: 0, payload: { event: "closing" } }];
    for (const value of usual) {
      assert.equal(isExactEnvelope(value), true, JSON.stringify(value));
      agreesWithSchema(value, EnvelopeSchema);
    }
    const odd: unknown[] = [
      null, 1, "x", [], [envelope],
      { ...envelope, type: "no-such-type" },
      { ...envelope, type: 7 },
      { ...envelope, id: "" },
      { ...envelope, id: "x".repeat(LIMITS.maxIdLength + 1) },
      { ...envelope, id: 3 },
      { ...envelope, timestamp: Number.NaN },
      { ...envelope, timestamp: Number.POSITIVE_INFINITY },
      { ...envelope, timestamp: "1" },
      { ...envelope, payload: null },
      { ...envelope, payload: [] },
      { ...envelope, payload: "x" },
      { ...envelope, extra: true },
      { type: envelope.type, timestamp: 1 },
    ];
    for (const value of odd) {
      // A yes must be one the schema shares; and none of these is the usual case.
      if (isExactEnvelope(value)) agreesWithSchema(value, EnvelopeSchema);
    }
    assert.equal(odd.filter((value) => isExactEnvelope(value)).length, 0);
  });

  it("isPlainCallResult: says yes to the usual answers, and only where CallResultSchema agrees", () => {
    const usual = [
      { success: true },
      { success: true, data: { n: 1 } },
      { success: false, cancelled: true },
      { success: true, data: null, cancelled: false },
    ];
    for (const value of usual) {
      assert.equal(isPlainCallResult(value), true, JSON.stringify(value));
      agreesWithSchema(value, CallResultSchema);
    }
    const odd: Record<string, unknown>[] = [
      {},
      { success: "yes" },
      { success: true, cancelled: true },
      { success: false, cancelled: true, data: 1 },
      { success: false, cancelled: "no" },
      { success: false, error: { code: "X", message: "m" } },
      { success: true, metadata: {} },
      { success: true, other: 1 },
    ];
    for (const value of odd) if (isPlainCallResult(value)) agreesWithSchema(value, CallResultSchema);
    assert.equal(odd.filter((value) => isPlainCallResult(value)).length, 0);
  });
});
