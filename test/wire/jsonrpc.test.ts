import assert from "node:assert/strict";
import {
  type Classified,
  classify,
  ErrorCode,
  errorResponse,
  invalidRequestResponse,
  isJsonRpcId,
  isRequest,
  type JsonRpcMessage,
  notification,
  parseErrorResponse,
  resultResponse,
} from "../../src/wire/jsonrpc.js";

function invalid(value: unknown): { problem: string; id: unknown } {
  const classified = classify(value);
  assert.equal(classified.kind, "invalid", `expected invalid, got ${JSON.stringify(classified)}`);
  if (classified.kind !== "invalid") throw new Error("unreachable");
  return { problem: classified.problem, id: classified.id };
}

function expectKind(value: unknown, kind: Classified["kind"]): Classified {
  const classified = classify(value);
  assert.equal(classified.kind, kind, `expected ${kind}, got ${JSON.stringify(classified)}`);
  return classified;
}

const BAD_ID_PREFIX = 'invalid "id": must be a string, a finite number or null, got ';

describe("classify", () => {
  describe("values that are not objects", () => {
    const cases: Array<[string, unknown, string]> = [
      ["null", null, "null"],
      ["a number", 42, "a number"],
      ["a string", "hello", "a string"],
      ["a boolean", true, "a boolean"],
    ];
    for (const [label, value, described] of cases) {
      it(`rejects ${label}`, () => {
        const { problem, id } = invalid(value);
        assert.equal(problem, `a JSON-RPC message must be an object, got ${described}`);
        assert.equal(id, null);
      });
    }

    it("rejects an array as an unsupported batch", () => {
      const { problem, id } = invalid([{ jsonrpc: "2.0", id: 1, method: "x" }]);
      assert.equal(problem, "JSON-RPC batches are not supported by ACP");
      assert.equal(id, null);
    });

    it("rejects an empty array as a batch", () => {
      assert.equal(invalid([]).problem, "JSON-RPC batches are not supported by ACP");
    });
  });

  describe('"jsonrpc" member', () => {
    const message = 'missing or wrong "jsonrpc": must be "2.0"';

    it("rejects a missing jsonrpc", () => {
      assert.deepEqual(invalid({ id: 1, method: "x" }), { problem: message, id: 1 });
    });

    it("rejects a wrong version string", () => {
      assert.deepEqual(invalid({ jsonrpc: "1.0", id: "a", method: "x" }), { problem: message, id: "a" });
    });

    it("rejects the number 2.0", () => {
      assert.deepEqual(invalid({ jsonrpc: 2.0, id: 3, method: "x" }), { problem: message, id: 3 });
    });

    it("echoes null for the id when the id itself is bad", () => {
      assert.deepEqual(invalid({ jsonrpc: "2", id: {}, method: "x" }), { problem: message, id: null });
    });

    it("checks jsonrpc before anything else in the object", () => {
      assert.equal(invalid({}).problem, message);
    });
  });

  describe('"id" member', () => {
    const badIds: Array<[string, unknown, string]> = [
      ["an array", [1], "an array"],
      ["a boolean", false, "a boolean"],
      ["NaN", Number.NaN, "a number"],
      ["Infinity", Number.POSITIVE_INFINITY, "a number"],
      ["-Infinity", Number.NEGATIVE_INFINITY, "a number"],
    ];
    for (const [label, value, described] of badIds) {
      it(`rejects ${label} as an id, answering with a null id`, () => {
        for (const shape of [{ method: "x" }, { result: 1 }]) {
          const { problem, id } = invalid({ jsonrpc: "2.0", id: value, ...shape });
          assert.equal(problem, `${BAD_ID_PREFIX}${described}`);
          assert.equal(id, null);
        }
      });
    }

    it("rejects an object as an id, answering with a null id", () => {
      const { problem, id } = invalid({ jsonrpc: "2.0", id: { n: 1 }, method: "x" });
      assert.ok(problem.startsWith(BAD_ID_PREFIX), problem);
      assert.match(problem, /object$/);
      assert.equal(id, null);
    });

    it('says "got an object" for an object id', () => {
      assert.equal(invalid({ jsonrpc: "2.0", id: {}, method: "x" }).problem, `${BAD_ID_PREFIX}an object`);
    });

    it("rejects a bad id before looking at the method", () => {
      assert.equal(invalid({ jsonrpc: "2.0", id: true, method: 7 }).problem, `${BAD_ID_PREFIX}a boolean`);
    });
  });

  describe('"method" member', () => {
    for (const method of [1, null, true, {}, ["x"]]) {
      it(`rejects method ${JSON.stringify(method)} with the request id echoed`, () => {
        assert.deepEqual(invalid({ jsonrpc: "2.0", id: 9, method }), {
          problem: '"method" must be a string',
          id: 9,
        });
      });
    }

    it("rejects a non-string method on a notification with a null id", () => {
      assert.deepEqual(invalid({ jsonrpc: "2.0", method: 1 }), {
        problem: '"method" must be a string',
        id: null,
      });
    });
  });

  describe("requests and notifications", () => {
    it("classifies a request with a numeric id", () => {
      const value = { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { a: 1 } };
      const classified = expectKind(value, "request");
      assert.equal(classified.kind === "request" && classified.message, value);
    });

    it("classifies a request with a string id, a zero id, a negative or fractional id", () => {
      for (const id of ["abc", "", 0, -5, 1.5]) {
        expectKind({ jsonrpc: "2.0", id, method: "m" }, "request");
      }
    });

    it("classifies a request with a null id (null is a valid id)", () => {
      expectKind({ jsonrpc: "2.0", id: null, method: "m" }, "request");
    });

    it("classifies a request without params", () => {
      expectKind({ jsonrpc: "2.0", id: 2, method: "m" }, "request");
    });

    it("classifies a message without id as a notification", () => {
      const value = { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } };
      const classified = expectKind(value, "notification");
      assert.equal(classified.kind === "notification" && classified.message, value);
    });

    it("treats an explicit undefined id as absent (notification)", () => {
      expectKind({ jsonrpc: "2.0", id: undefined, method: "m" }, "notification");
    });

    it("an empty method string is still a string", () => {
      expectKind({ jsonrpc: "2.0", id: 1, method: "" }, "request");
    });
  });

  describe("responses", () => {
    it("classifies a result response", () => {
      const value = { jsonrpc: "2.0", id: 1, result: { ok: true } };
      const classified = expectKind(value, "response");
      assert.equal(classified.kind === "response" && classified.message, value);
    });

    it("accepts a null or falsy result as present", () => {
      for (const result of [null, 0, false, ""]) {
        expectKind({ jsonrpc: "2.0", id: 1, result }, "response");
      }
    });

    it("classifies an error response, with and without data", () => {
      expectKind({ jsonrpc: "2.0", id: "x", error: { code: -32601, message: "nope" } }, "response");
      expectKind({ jsonrpc: "2.0", id: "x", error: { code: 1, message: "", data: [1] } }, "response");
    });

    it("allows a null id on a response", () => {
      expectKind({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, "response");
      expectKind({ jsonrpc: "2.0", id: null, result: 1 }, "response");
    });

    it("rejects a response with both result and error", () => {
      assert.deepEqual(invalid({ jsonrpc: "2.0", id: 4, result: 1, error: { code: 1, message: "m" } }), {
        problem: 'a response needs exactly one of "result" and "error"',
        id: 4,
      });
    });

    it("rejects a response with neither result nor error", () => {
      assert.deepEqual(invalid({ jsonrpc: "2.0", id: "r" }), {
        problem: 'a response needs exactly one of "result" and "error"',
        id: "r",
      });
    });

    it("does not count an inherited result as present", () => {
      const value = Object.assign(Object.create({ result: 1 }) as object, { jsonrpc: "2.0", id: 1 });
      assert.equal(invalid(value).problem, 'a response needs exactly one of "result" and "error"');
    });

    it("rejects a message with neither method nor id", () => {
      const problem = 'neither "method" nor "id": not a request, notification or response';
      assert.deepEqual(invalid({ jsonrpc: "2.0" }), { problem, id: null });
    });

    it("an id-less answer (codex-acp's to $/cancel_request) is named as the peer's defect, not ours", () => {
      for (const answer of [{ jsonrpc: "2.0", result: 1 }, { jsonrpc: "2.0", error: { code: -32601, message: "unknown" } }]) {
        const { problem, id } = invalid(answer);
        assert.equal(id, null);
        assert.match(problem, /^a response without "id".*the peer's defect.*notification/, problem);
      }
    });

    const badErrors: Array<[string, unknown]> = [
      ["null", null],
      ["a string", "boom"],
      ["a number", -32000],
      ["an array", []],
      ["an object without code", { message: "m" }],
      ["an object without message", { code: 1 }],
      ["a fractional code", { code: 1.5, message: "m" }],
      ["a string code", { code: "1", message: "m" }],
      ["a NaN code", { code: Number.NaN, message: "m" }],
      ["a non-string message", { code: 1, message: 5 }],
    ];
    for (const [label, error] of badErrors) {
      it(`rejects ${label} as the error object`, () => {
        assert.deepEqual(invalid({ jsonrpc: "2.0", id: 5, error }), {
          problem: '"error" must be an object with an integer "code" and a string "message"',
          id: 5,
        });
      });
    }
  });

  it("classifies values straight from JSON.parse", () => {
    const kinds = [
      '{"jsonrpc":"2.0","id":1,"method":"a"}',
      '{"jsonrpc":"2.0","method":"a"}',
      '{"jsonrpc":"2.0","id":1,"result":null}',
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}',
      '[{"jsonrpc":"2.0","method":"a"}]',
      '{"jsonrpc":"2.0","id":1e400,"method":"a"}', // 1e400 parses to Infinity
    ].map((text) => classify(JSON.parse(text)).kind);
    assert.deepEqual(kinds, ["request", "notification", "response", "response", "invalid", "invalid"]);
  });
});

describe("isJsonRpcId", () => {
  it("accepts strings, finite numbers and null", () => {
    for (const id of ["", "a", 0, -1, 2.5, Number.MAX_SAFE_INTEGER, null]) {
      assert.equal(isJsonRpcId(id), true, String(id));
    }
  });

  it("rejects everything else", () => {
    for (const id of [undefined, Number.NaN, Number.POSITIVE_INFINITY, true, {}, [], 1n]) {
      assert.equal(isJsonRpcId(id), false, String(id));
    }
  });
});

describe("message builders", () => {
  it("errorResponse omits data when undefined and keeps it otherwise", () => {
    const bare = errorResponse(1, -32000, "oops");
    assert.deepEqual(bare, { jsonrpc: "2.0", id: 1, error: { code: -32000, message: "oops" } });
    assert.equal("data" in (bare as { error: object }).error, false);
    assert.deepEqual(errorResponse("a", 1, "m", { x: 1 }), {
      jsonrpc: "2.0",
      id: "a",
      error: { code: 1, message: "m", data: { x: 1 } },
    });
    assert.deepEqual(errorResponse(null, 1, "m", null), {
      jsonrpc: "2.0",
      id: null,
      error: { code: 1, message: "m", data: null },
    });
  });

  it("resultResponse and notification build the expected shapes", () => {
    assert.deepEqual(resultResponse(3, { ok: 1 }), { jsonrpc: "2.0", id: 3, result: { ok: 1 } });
    assert.deepEqual(notification("m", [1]), { jsonrpc: "2.0", method: "m", params: [1] });
  });

  it("parseErrorResponse answers with a null id and -32700", () => {
    assert.deepEqual(parseErrorResponse("bad"), {
      jsonrpc: "2.0",
      id: null,
      error: { code: ErrorCode.ParseError, message: "Parse error: bad" },
    });
  });

  it("invalidRequestResponse answers with the given id and -32600", () => {
    assert.deepEqual(invalidRequestResponse(7, "why"), {
      jsonrpc: "2.0",
      id: 7,
      error: { code: ErrorCode.InvalidRequest, message: "Invalid request: why" },
    });
  });

  it("built messages classify as what they are", () => {
    assert.equal(classify(errorResponse(1, -1, "m", { d: 1 })).kind, "response");
    assert.equal(classify(resultResponse(null, undefined)).kind, "response");
    assert.equal(classify(notification("m", undefined)).kind, "notification");
    assert.equal(classify(parseErrorResponse("x")).kind, "response");
  });

  it("isRequest tells requests from notifications and responses", () => {
    const request: JsonRpcMessage = { jsonrpc: "2.0", id: 1, method: "m" };
    const note: JsonRpcMessage = { jsonrpc: "2.0", method: "m" };
    const response: JsonRpcMessage = { jsonrpc: "2.0", id: 1, result: 1 };
    assert.equal(isRequest(request), true);
    assert.equal(isRequest(note), false);
    assert.equal(isRequest(response), false);
  });
});

describe("ErrorCode", () => {
  it("has the JSON-RPC and LSP values", () => {
    assert.deepEqual(
      { ...ErrorCode },
      {
        ParseError: -32700,
        InvalidRequest: -32600,
        MethodNotFound: -32601,
        InvalidParams: -32602,
        InternalError: -32603,
        RequestCancelled: -32800,
      },
    );
  });
});
