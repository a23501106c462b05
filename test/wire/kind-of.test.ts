import assert from "node:assert/strict";
import fc from "fast-check";
import { classify, kindOf } from "../../src/wire/index.js";

/** JSON-RPC-ish objects: right and wrong in every field the classifier looks at. */
const messageLike = fc.record(
  {
    jsonrpc: fc.constantFrom("2.0", "1.0", 2, undefined),
    id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.object(), fc.boolean()),
    method: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    params: fc.oneof(fc.object(), fc.array(fc.integer()), fc.integer(), fc.constant(null), fc.string()),
    result: fc.jsonValue(),
    error: fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), fc.record({ code: fc.double() }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

describe("kindOf (the hot path's classifier)", () => {
  it("always agrees with classify", () => {
    fc.assert(
      fc.property(fc.oneof(messageLike, fc.jsonValue()), (value) => {
        assert.equal(kindOf(value), classify(value).kind);
      }),
      { numRuns: 5000 },
    );
  });
});
