import assert from "node:assert/strict";
import { aosResult, AosResultSchema, guardianResponse, GuardianResponseSchema } from "../../src/a2a/aos.js";

/** Answers a guardian might send, well-formed or not: the hand check must read each as the schema does. */
const responses: unknown[] = [
  { jsonrpc: "2.0", id: "a", result: { decision: "allow" } },
  { jsonrpc: "2.0", id: "a", result: null },
  { jsonrpc: "2.0", id: "a", result: { decision: "deny" }, extra: 1 },
  { jsonrpc: "2.0", id: 7, result: { decision: "allow" } },
  { jsonrpc: "2.0", id: null, result: { decision: "allow" } },
  { jsonrpc: "2.0", id: "a" },
  { jsonrpc: "2.0", id: "a", error: { code: -32000, message: "no" } },
  { jsonrpc: "2.0", id: "a", error: { code: 1.5, message: "no" }, result: { decision: "allow" } },
  { jsonrpc: "2.0", id: "a", error: "bad", result: { decision: "allow" } },
  { jsonrpc: "1.0", id: "a", result: { decision: "allow" } },
  { id: "a", result: { decision: "allow" } },
  { jsonrpc: "2.0", id: {}, result: { decision: "allow" } },
  [{ jsonrpc: "2.0", id: "a", result: { decision: "allow" } }],
  null,
  "allow",
  42,
];

const results: unknown[] = [
  { decision: "allow" },
  { decision: "deny", message: "no", reasoning: "why", reasonCode: ["a", 2] },
  { decision: "modify", modifiedRequest: { x: 1 }, data: [1] },
  { decision: "maybe", extra: true },
  { decision: "" },
  { decision: 1 },
  { message: "no decision" },
  { decision: "allow", message: 3 },
  { decision: "allow", reasoning: null },
  { decision: "allow", reasonCode: "a" },
  { decision: "allow", reasonCode: [true] },
  { decision: "allow", reasonCode: [Infinity] },
  { decision: "allow", reasonCode: [] },
  [{ decision: "allow" }],
  null,
  undefined,
  "allow",
];

/** The fields the guardian client reads from each. */
const readResponse = (r: ReturnType<typeof guardianResponse>) =>
  r === undefined ? undefined : { id: r.id, error: "error" in r ? r.error : undefined, result: "result" in r ? r.result : undefined };
const readResult = (r: ReturnType<typeof aosResult>) =>
  r === undefined
    ? undefined
    : { decision: r.decision, message: r.message, reasoning: r.reasoning, reasonCode: r.reasonCode };

describe("reading a guardian's answer: the hand check agrees with the schemas", () => {
  it("accepts and reads every JSON-RPC answer exactly as GuardianResponseSchema does", () => {
    for (const json of responses) {
      const parsed = GuardianResponseSchema.safeParse(json);
      const expected = readResponse(parsed.success ? parsed.data : undefined);
      assert.deepEqual(readResponse(guardianResponse(json)), expected, JSON.stringify(json));
    }
  });

  it("accepts and reads every result exactly as AosResultSchema does", () => {
    for (const value of results) {
      const parsed = AosResultSchema.safeParse(value);
      const expected = readResult(parsed.success ? parsed.data : undefined);
      assert.deepEqual(readResult(aosResult(value)), expected, JSON.stringify(value));
    }
  });
});
