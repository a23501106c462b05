import assert from "node:assert/strict";
import { parseJsonLine } from "../../src/wire/index.js";

describe("parseJsonLine", () => {
  it("parses ordinary JSON", () => {
    assert.deepEqual(parseJsonLine('{"a":1}'), { a: 1 });
    assert.equal(parseJsonLine(" 5 "), 5);
  });

  it("accepts what the SDK's reader accepts: a leading BOM and Unicode whitespace around the value", () => {
    assert.deepEqual(parseJsonLine('\uFEFF{"a":1}'), { a: 1 });
    assert.deepEqual(parseJsonLine('{"a":1}\u2028'), { a: 1 });
    assert.deepEqual(parseJsonLine('\u00a0{"a":1}\u00a0'), { a: 1 });
    assert.deepEqual(parseJsonLine('{"a":1}\f'), { a: 1 });
  });

  it("still rejects what is not JSON, with JSON.parse's own message", () => {
    assert.throws(() => parseJsonLine("not json"), SyntaxError);
    assert.throws(() => parseJsonLine('\uFEFF{"a":'), SyntaxError);
    assert.throws(() => parseJsonLine('{"a":1}x'), SyntaxError);
  });
});
