import assert from "node:assert/strict";
import { randomCallId } from "../../src/abp/call-id.js";

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("ABP call ids", () => {
  it("are version 4 UUIDs, distinct across several pools of random bytes, with every free digit varying", () => {
    const ids = Array.from({ length: 1000 }, () => randomCallId());
    for (const id of ids) assert.match(id, V4);
    assert.equal(new Set(ids).size, ids.length);
    // Each position that is not fixed by the version or variant takes most of its values.
    for (const position of [0, 7, 9, 15, 21, 35]) {
      const seen = new Set(ids.map((id) => id[position]));
      assert.ok(seen.size >= 12, `position ${position} took only ${seen.size} values`);
    }
    // The variant digit takes all four of its values.
    assert.equal(new Set(ids.map((id) => id[19])).size, 4);
  });
});
