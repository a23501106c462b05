import assert from "node:assert/strict";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import {
  DEFAULT_MAX_LINE_BYTES,
  describeProblem,
  type FramingProblem,
  readNdjson,
} from "../../src/wire/ndjson-reader.js";

interface Capture {
  values: unknown[];
  problems: FramingProblem[];
  ends: Array<Error | undefined>;
  events: string[];
  ended: Promise<Error | undefined>;
  detach: () => void;
}

function capture(stream: PassThrough, maxLineBytes?: number): Capture {
  let resolveEnded!: (error: Error | undefined) => void;
  const ended = new Promise<Error | undefined>((resolve) => {
    resolveEnded = resolve;
  });
  const values: unknown[] = [];
  const problems: FramingProblem[] = [];
  const ends: Array<Error | undefined> = [];
  const events: string[] = [];
  const detach = readNdjson(
    stream,
    {
      value(value) {
        values.push(value);
        events.push("value");
      },
      problem(problem) {
        problems.push(problem);
        events.push(`problem:${problem.kind}`);
      },
      end(error) {
        ends.push(error);
        events.push("end");
        resolveEnded(error);
      },
    },
    maxLineBytes === undefined ? {} : { maxLineBytes },
  );
  return { values, problems, ends, events, ended, detach };
}

/** Lets queued stream events (end, close, error) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("readNdjson", () => {
  it("delivers each JSON value in order and ends without error", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n[1,2]\n');
    stream.write('"text"\n42\nnull\ntrue\n');
    stream.end();
    assert.equal(await cap.ended, undefined);
    assert.deepEqual(cap.values, [{ jsonrpc: "2.0", id: 1, method: "a" }, [1, 2], "text", 42, null, true]);
    assert.deepEqual(cap.problems, []);
  });

  it("reassembles values split across writes, including multi-byte characters", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    const bytes = Buffer.from('{"text":"héllo 😀"}\r\n{"n":2}\n', "utf8");
    for (const byte of bytes) stream.write(Buffer.from([byte]));
    stream.end();
    await cap.ended;
    assert.deepEqual(cap.values, [{ text: "héllo 😀" }, { n: 2 }]);
  });

  it("accepts string chunks from a stream with an encoding set", async () => {
    const stream = new PassThrough();
    stream.setEncoding("utf8");
    const cap = capture(stream);
    const bytes = Buffer.from('{"e":"é"}\n', "utf8");
    for (const byte of bytes) stream.write(Buffer.from([byte]));
    stream.end();
    await cap.ended;
    assert.deepEqual(cap.values, [{ e: "é" }]);
  });

  it("delivers a last line without LF before the end callback", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.end('{"a":1}\n{"b":2}');
    await cap.ended;
    assert.deepEqual(cap.values, [{ a: 1 }, { b: 2 }]);
    assert.deepEqual(cap.events, ["value", "value", "end"]);
  });

  it("skips blank lines without reporting them", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.end("\n  \n\r\n1\n\n");
    await cap.ended;
    assert.deepEqual(cap.values, [1]);
    assert.deepEqual(cap.problems, []);
  });

  it("reports a line that is not JSON and keeps reading", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.write("{not json\n");
    stream.write('{"after":true}\n');
    stream.write("{}}\n");
    stream.end("3\n");
    assert.equal(await cap.ended, undefined);
    assert.deepEqual(cap.events, ["problem:parse", "value", "problem:parse", "value", "end"]);
    assert.deepEqual(cap.values, [{ after: true }, 3]);
    const [first, second] = cap.problems;
    assert.ok(first?.kind === "parse" && second?.kind === "parse");
    assert.deepEqual([first.bytes, first.line, second.bytes, second.line], [9, "{not json", 3, "{}}"]);
    let expected = "";
    try {
      JSON.parse("{not json");
    } catch (error) {
      expected = (error as Error).message;
    }
    assert.equal(first.detail, expected);
    assert.ok(first.detail.length > 0);
  });

  it("reports a bad line's size, a truncated preview, and the parser's complaint without the line's text", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    const long = `x${"y".repeat(199)}`;
    const exactly80 = "z".repeat(80);
    const just81 = "w".repeat(81);
    stream.end(`${long}\n${exactly80}\n${just81}\n"unterminated\n`);
    await cap.ended;
    assert.deepEqual(
      cap.problems.map((problem) => (problem.kind === "parse" ? [problem.bytes, problem.line, /[xyzw]{2}|unterm/.test(problem.detail)] : [])),
      [[200, `${long.slice(0, 80)}…`, false], [80, exactly80, false], [81, `${"w".repeat(80)}…`, false], [13, '"unterminated', false]],
    );
  });

  it("reports an oversize line with its size and the limit, then keeps reading", async () => {
    const stream = new PassThrough();
    const cap = capture(stream, 16);
    stream.write('{"ok":1}\n');
    stream.write(`"${"a".repeat(30)}"\n`);
    stream.end('{"ok":2}\n');
    assert.equal(await cap.ended, undefined);
    // The head is the line's first bytes (up to 1 KiB), kept so that a caller can read its id.
    assert.deepEqual(cap.problems, [{ kind: "oversize", bytes: 32, limit: 16, head: `"${"a".repeat(30)}"` }]);
    assert.deepEqual(cap.values, [{ ok: 1 }, { ok: 2 }]);
    assert.deepEqual(cap.events, ["value", "problem:oversize", "value", "end"]);
  });

  it("reports an oversize unterminated last line before ending", async () => {
    const stream = new PassThrough();
    const cap = capture(stream, 4);
    stream.end("123456");
    await cap.ended;
    assert.deepEqual(cap.problems, [{ kind: "oversize", bytes: 6, limit: 4, head: "123456" }]);
    assert.deepEqual(cap.events, ["problem:oversize", "end"]);
  });

  it("uses a 64 MiB default limit", () => {
    assert.equal(DEFAULT_MAX_LINE_BYTES, 64 * 1024 * 1024);
  });

  it("calls end exactly once even though the stream emits end and close", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    const closed = once(stream, "close");
    stream.end("1\n");
    await closed;
    await settle();
    assert.deepEqual(cap.ends, [undefined]);
  });

  it("calls end once when the stream is closed without ending", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.write("1\n");
    await settle();
    stream.destroy();
    assert.equal(await cap.ended, undefined);
    await settle();
    assert.deepEqual(cap.ends, [undefined]);
    assert.deepEqual(cap.values, [1]);
  });

  it("passes a stream error to end, once, without flushing the partial line", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.write('{"a":1}\n{"partial":');
    await settle();
    const boom = new Error("boom");
    stream.destroy(boom);
    assert.equal(await cap.ended, boom);
    await settle();
    assert.deepEqual(cap.ends, [boom]);
    assert.deepEqual(cap.values, [{ a: 1 }]);
    assert.deepEqual(cap.problems, []);
  });

  it("ignores an error emitted after the stream already ended", async () => {
    const stream = new PassThrough();
    const cap = capture(stream);
    stream.end("1\n");
    await cap.ended;
    stream.emit("error", new Error("late"));
    await settle();
    assert.deepEqual(cap.ends, [undefined]);
  });

  it("returns a detach function that removes every listener", async () => {
    const stream = new PassThrough();
    const before = ["data", "end", "error", "close"].map((e) => stream.listenerCount(e));
    const cap = capture(stream);
    stream.write("1\n");
    await settle();
    assert.deepEqual(cap.values, [1]);
    cap.detach();
    assert.deepEqual(
      ["data", "end", "error", "close"].map((e) => stream.listenerCount(e)),
      before,
    );
    stream.resume();
    stream.end("2\n");
    await once(stream, "close");
    await settle();
    assert.deepEqual(cap.values, [1]);
    assert.deepEqual(cap.ends, []);
  });
});

describe("describeProblem", () => {
  it("describes a parse problem with its size and detail, and its text only when asked", () => {
    const problem = { kind: "parse", detail: "Unexpected token", bytes: 2, line: "{x" } as const;
    assert.equal(describeProblem(problem), "line is not valid JSON (2 bytes: Unexpected token)");
    assert.equal(describeProblem(problem, true), "line is not valid JSON (2 bytes: Unexpected token): {x");
  });

  it("describes an oversize problem with its size and limit", () => {
    assert.equal(
      describeProblem({ kind: "oversize", bytes: 2048, limit: 1024 }),
      "line of 2048 bytes exceeds the 1024-byte limit",
    );
  });
});
