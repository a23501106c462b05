import assert from "node:assert/strict";
import { aosResult, AosResultSchema } from "../../src/a2a/aos.js";

/** Results a guardian might send, well-formed or not: the hand check must read each as the schema does. */
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
const readResult = (r: ReturnType<typeof aosResult>) =>
  r === undefined
    ? undefined
    : { decision: r.decision, message: r.message, reasoning: r.reasoning, reasonCode: r.reasonCode };

describe("reading a guardian's answer: the hand check agrees with the schema", () => {
  it("accepts and reads every result exactly as AosResultSchema does", () => {
    for (const value of results) {
      const parsed = AosResultSchema.safeParse(value);
      const expected = readResult(parsed.success ? parsed.data : undefined);
      assert.deepEqual(readResult(aosResult(value)), expected, JSON.stringify(value));
    }
  });
});
