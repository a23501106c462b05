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

describe("the id at an oversized line's start, from a hostile peer: never a throw, never a guess", () => {
  const cases: [string, string | number | undefined][] = [
    ['{"\\q":1,"id":7,"method":"x","params":{"pad":"xx', undefined], // a key with a bad escape
    ['{"id":"\\q","method":"x","params":{"pad":"xx', undefined], // an id with a bad escape
    ['{"id":7,"\\q":1,"params":{"pad":"xx', undefined], // a bad key after the id: no request
    ['{"id":"\\ud800","method":"x"', "\ud800"], // a lone surrogate is valid JSON
    ['{"id":1,"method":"x","id":2,"params":{"pad":"xx', undefined], // JSON.parse would take 2
    ['{"id":1,"\\u0069d":2,"params":{"pad":"xx', undefined], // the same key, escaped
    ['{"id":9007199254740993,"method":"x"', undefined], // 2^53 + 1 would round to 2^53
    ['{"id":-9007199254740991,"method":"x"', -9007199254740991], // the safe edge stays
    ['{"id":007,"method":"x"', undefined], // not a JSON number
    ['{"id":3,"params":{"id":4},"method":"x","pad":"xx', 3], // a nested id is no repeat
    ['{"id":12]","method":"x","pad":"xx', undefined], // not JSON after the id
    ['{"id":"a" "b","method":"x","pad":"xx', undefined],
    ['{"id":"a" ,"method":"x","pad":"xx', "a"], // whitespace is JSON
  ];
  for (const [head, id] of cases) {
    it(`${head} → ${JSON.stringify(id)}`, () => assert.equal(idAtLineStart(head), id));
  }
});
