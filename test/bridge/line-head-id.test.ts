import assert from "node:assert/strict";
import { idAtLineStart } from "../../src/bridge/line-head-id.js";

describe("the id at an oversized line's start", () => {
  const cases: [string, string | number | null | undefined][] = [
    ['{"jsonrpc":"2.0","id":12,"method":"x","params":{"pad":"xxx', 12],
    ['  { "id" : "abc\\"d" , "method":"x"', 'abc"d'],
    ['{"jsonrpc":"2.0","method":"x","params":{"id":7,"list":[1,{"id":8}]},"id":-3,"more', -3],
    ['{"jsonrpc":"2.0","method":"x","params":{"id":7,"pad":"xxxxx', undefined], // the real id is beyond the start
    ['{"id":12', undefined], // the number may go on
    ['{"id":"unterminated', undefined],
    ['{"id":null,"method":"x"', undefined],
    ['{"id":{"bad":1},"method":"x"', undefined],
    ['["not an object"', undefined],
    ['{"a":"}","b":[{"c":"]"}],"id":5,', 5],
    ["", undefined],
  ];
  for (const [head, id] of cases) {
    it(`${head || "(empty)"} → ${JSON.stringify(id)}`, () => assert.equal(idAtLineStart(head), id));
  }
});
