import assert from "node:assert/strict";
import { HEAD_BYTES, type LineSink, LineSplitter } from "../../src/wire/line-splitter.js";

interface Recorder extends LineSink {
  lines: string[];
  oversizes: number[];
  events: string[];
}

function recorder(): Recorder {
  const rec: Recorder = {
    lines: [],
    oversizes: [],
    events: [],
    line(text) {
      rec.lines.push(text);
      rec.events.push(`line:${text}`);
    },
    oversize(bytes) {
      rec.oversizes.push(bytes);
      rec.events.push(`oversize:${bytes}`);
    },
  };
  return rec;
}

function splitter(max = 1024): { splitter: LineSplitter; sink: Recorder } {
  const sink = recorder();
  return { splitter: new LineSplitter(sink, max), sink };
}

const b = (text: string) => Buffer.from(text, "utf8");

/** The splitter's retained parts (private): used to prove memory stays bounded. */
function retainedBytes(s: LineSplitter): number {
  const parts = (s as unknown as { parts: Buffer[] }).parts;
  assert.ok(Array.isArray(parts), "LineSplitter no longer keeps a private `parts` array");
  return parts.reduce((sum, part) => sum + part.length, 0);
}

describe("LineSplitter", () => {
  it("emits one line per LF within a chunk", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("one\ntwo\nthree\n"));
    assert.deepEqual(sink.lines, ["one", "two", "three"]);
  });

  it("does not emit a line until its LF arrives", () => {
    const { splitter: s, sink } = splitter();
    s.push(b('{"a":'));
    assert.deepEqual(sink.lines, []);
    s.push(b("1}"));
    assert.deepEqual(sink.lines, []);
    s.push(b("\n"));
    assert.deepEqual(sink.lines, ['{"a":1}']);
  });

  it("joins a line split across many chunks, with other lines around it", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("first\nsec"));
    s.push(b("o"));
    s.push(b("nd\nthi"));
    s.push(b("rd\nfourth"));
    assert.deepEqual(sink.lines, ["first", "second", "third"]);
    s.end();
    assert.deepEqual(sink.lines, ["first", "second", "third", "fourth"]);
  });

  it("produces the same lines whatever the chunking", () => {
    const input = b('{"id":1}\r\n\n  \n{"id":"é😀"}\nlast');
    const expected = ['{"id":1}', '{"id":"é😀"}', "last"];
    for (let size = 1; size <= input.length; size++) {
      const { splitter: s, sink } = splitter();
      for (let at = 0; at < input.length; at += size) s.push(input.subarray(at, at + size));
      s.end();
      assert.deepEqual(sink.lines, expected, `chunk size ${size}`);
    }
  });

  it("strips a trailing CR (CRLF), even when CR and LF arrive in different chunks", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("a\r\nb\r"));
    s.push(b("\n"));
    assert.deepEqual(sink.lines, ["a", "b"]);
  });

  it("strips only one trailing CR and keeps inner CRs", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("a\rb\nc\r\r\n"));
    assert.deepEqual(sink.lines, ["a\rb", "c\r"]);
  });

  it("skips empty and whitespace-only lines", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("\n\n\r\n   \n\t \r\nx\n \n"));
    s.end();
    assert.deepEqual(sink.lines, ["x"]);
    assert.deepEqual(sink.oversizes, []);
  });

  it("keeps surrounding spaces on a non-blank line", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("  {} \n"));
    assert.deepEqual(sink.lines, ["  {} "]);
  });

  for (const char of ["é", "€", "😀"]) {
    it(`decodes ${char} (${b(char).length} bytes) pushed one byte at a time`, () => {
      const { splitter: s, sink } = splitter();
      const bytes = b(`"${char}${char}"\n`);
      for (const byte of bytes) s.push(Buffer.from([byte]));
      assert.deepEqual(sink.lines, [`"${char}${char}"`]);
    });
  }

  it("decodes a multi-byte char cut between chunks that also hold other lines", () => {
    const { splitter: s, sink } = splitter();
    const bytes = b("ok\n😀x\n");
    // cut inside the emoji: "ok\n" + 2 bytes | 2 bytes + "x\n"
    s.push(bytes.subarray(0, 5));
    s.push(bytes.subarray(5));
    assert.deepEqual(sink.lines, ["ok", "😀x"]);
  });

  it("emits the last line without LF on end()", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("a\nb"));
    assert.deepEqual(sink.lines, ["a"]);
    s.end();
    assert.deepEqual(sink.lines, ["a", "b"]);
  });

  it("strips a trailing CR on the last line at end()", () => {
    const { splitter: s, sink } = splitter();
    s.push(b("b\r"));
    s.end();
    assert.deepEqual(sink.lines, ["b"]);
  });

  it("end() emits nothing when there is nothing pending, and nothing twice", () => {
    const { splitter: s, sink } = splitter();
    s.end();
    s.push(b("a\n"));
    s.end();
    s.push(b("b"));
    s.end();
    s.end();
    assert.deepEqual(sink.lines, ["a", "b"]);
  });

  it("ignores empty chunks", () => {
    const { splitter: s, sink } = splitter();
    s.push(Buffer.alloc(0));
    s.push(b("a"));
    s.push(Buffer.alloc(0));
    s.push(b("\n"));
    assert.deepEqual(sink.lines, ["a"]);
  });

  it("does not alias the emitted text to later chunks", () => {
    const { splitter: s, sink } = splitter();
    const chunk = b("abc\n");
    s.push(chunk);
    chunk.fill(0x7a);
    assert.deepEqual(sink.lines, ["abc"]);
  });

  it("hands each line's exact bytes, with LF right after them only when the line ended there in one chunk", () => {
    const seen: { text: string; bytes: string; lfFollows: boolean }[] = [];
    const s = new LineSplitter(
      {
        line(text, bytes, start, end) {
          seen.push({ text, bytes: bytes.toString("utf8", start, end), lfFollows: bytes[end] === 0x0a });
        },
        oversize() {},
      },
      1024,
    );
    s.push(b('{"a":"é"}\n{"b":2}\r\n{"c"'));
    s.push(b(":3}\nlast"));
    s.end();
    assert.deepEqual(seen, [
      { text: '{"a":"é"}', bytes: '{"a":"é"}', lfFollows: true },
      { text: '{"b":2}', bytes: '{"b":2}', lfFollows: false },
      { text: '{"c":3}', bytes: '{"c":3}', lfFollows: false },
      { text: "last", bytes: "last", lfFollows: false },
    ]);
  });

  describe("line cap", () => {
    it("accepts a line of exactly maxLineBytes", () => {
      const { splitter: s, sink } = splitter(8);
      s.push(b("12345678\n"));
      assert.deepEqual(sink.lines, ["12345678"]);
      assert.deepEqual(sink.oversizes, []);
    });

    it("reports a line one byte over, with its byte count", () => {
      const { splitter: s, sink } = splitter(8);
      s.push(b("123456789\n"));
      assert.deepEqual(sink.lines, []);
      assert.deepEqual(sink.oversizes, [9]);
    });

    it("counts bytes, not characters", () => {
      const { splitter: s, sink } = splitter(8);
      s.push(b("éééé\n")); // 8 bytes
      s.push(b("ééééé\n")); // 10 bytes
      assert.deepEqual(sink.lines, ["éééé"]);
      assert.deepEqual(sink.oversizes, [10]);
    });

    it("reports an oversize line once, with its total size, and delivers the next line", () => {
      const { splitter: s, sink } = splitter(10);
      s.push(b("ok1\n0123456"));
      s.push(b("789abcdef"));
      s.push(b("ghij"));
      assert.deepEqual(sink.oversizes, [], "reported only when its LF arrives");
      s.push(b("\nok2\n"));
      assert.deepEqual(sink.events, ["line:ok1", "oversize:20", "line:ok2"]);
    });

    it("reports consecutive oversize lines separately", () => {
      const { splitter: s, sink } = splitter(4);
      s.push(b("aaaaaa\nbbbbbbbbb\ncc\n"));
      assert.deepEqual(sink.events, ["oversize:6", "oversize:9", "line:cc"]);
    });

    it("reports an oversize last line on end()", () => {
      const { splitter: s, sink } = splitter(4);
      s.push(b("ok\n"));
      s.push(b("toolong"));
      assert.deepEqual(sink.oversizes, []);
      s.end();
      assert.deepEqual(sink.events, ["line:ok", "oversize:7"]);
      s.end();
      assert.deepEqual(sink.oversizes, [7]);
    });

    it("recovers fully after an oversize line: the next line may be up to the cap", () => {
      const { splitter: s, sink } = splitter(5);
      s.push(b("xxxxxxxx\n"));
      s.push(b("12"));
      s.push(b("345\n"));
      assert.deepEqual(sink.events, ["oversize:8", "line:12345"]);
    });

    it("keeps memory bounded while a 10 MB line streams in 64 KB chunks past a 1 MB cap", () => {
      const cap = 1024 * 1024;
      const chunkSize = 64 * 1024;
      const total = 10 * 1024 * 1024;
      const { splitter: s, sink } = splitter(cap);
      const chunk = Buffer.alloc(chunkSize, 0x61);
      let maxRetained = 0;
      for (let sent = 0; sent < total; sent += chunkSize) {
        s.push(chunk);
        const retained = retainedBytes(s);
        maxRetained = Math.max(maxRetained, retained);
        assert.ok(retained <= cap, `retained ${retained} bytes after ${sent + chunkSize}`);
        if (sent + chunkSize > cap)
          assert.equal(retained, 0, `parts kept after the cap at ${sent + chunkSize}`);
      }
      assert.equal(maxRetained, cap, "the parts were kept up to the cap");
      assert.deepEqual(sink.oversizes, []);
      s.push(b('\n{"next":true}\n'));
      assert.deepEqual(sink.oversizes, [total]);
      assert.deepEqual(sink.lines, ['{"next":true}']);
      assert.equal(retainedBytes(s), 0);
    });
  });

  describe("the head of a dropped line (so that a reader can still find its id)", () => {
    const heads = () => {
      const found: string[] = [];
      const sink: LineSink = { line() {}, oversize: (_bytes, head) => found.push(head.toString()) };
      return { found, sink };
    };
    const line = `{"id":42,"pad":"${"x".repeat(3000)}"}`;

    it("a line dropped within one chunk: its first HEAD_BYTES bytes", () => {
      const { found, sink } = heads();
      new LineSplitter(sink, 100).push(b(`${line}\n`));
      assert.deepEqual(found, [line.slice(0, HEAD_BYTES)]);
    });

    it("a line dropped across chunks, the cap passed in a later one: the same bytes, joined", () => {
      const { found, sink } = heads();
      const s = new LineSplitter(sink, 2000);
      for (let at = 0; at < line.length; at += 7) s.push(b(line.slice(at, at + 7)));
      s.push(b('\n{"next":1}\n'));
      assert.deepEqual(found, [line.slice(0, HEAD_BYTES)]);
      // A second dropped line gets its own head, not the first one's.
      s.push(b(`${line.replace("42", "43")}\n`));
      assert.equal(found[1]?.startsWith('{"id":43'), true);
    });
  });
});
