import { strict as assert } from "node:assert";
import { LIMITS } from "../../src/abp/app/protocol.js";
import { checkEnvelope } from "../../src/abp/app/validate.js";
import { CallResultSchema, isPlainCallResult } from "../../src/abp/schemas.js";

/** A hand check may only say yes where its schema accepts the value and gives it back unchanged. */
function agreesWithSchema(value: unknown, schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }) {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `the hand check accepted what the schema refuses: ${JSON.stringify(value)}`);
  assert.deepEqual(parsed.data, value, `the schema would have changed ${JSON.stringify(value)}`);
}

const envelope = { type: "capabilities/call-result", id: "e-1", timestamp: 1_700_000_000_000, payload: { success: true } };

describe("ABP hand checks", () => {
  it("checkEnvelope (both sides' envelope check): says yes to the usual envelopes, no to anything malformed", () => {
    const usual = [envelope, { ...envelope, id: undefined }, { type: "notification", timestamp: 0, payload: { event: "closing" } }];
    for (const value of usual) assert.equal(checkEnvelope(value).ok, true, JSON.stringify(value));
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
      { type: envelope.type, timestamp: 1 },
    ];
    for (const value of odd) assert.equal(checkEnvelope(value).ok, false, JSON.stringify(value));
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
