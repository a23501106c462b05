import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { setImmediate as nextBurst } from "node:timers/promises";
import sinon from "sinon";
import { FlushGroup, NdjsonEndpoint } from "../../src/bridge/ndjson-endpoint.js";
import type { FramingProblem } from "../../src/wire/index.js";

/**
 * Two endpoints as the bridge wires them: what `left` reads is relayed through `right`'s
 * output. Values with `"synth": true` are preceded by a message the relay writes itself.
 */
function relay(flushPerChunk = false) {
  const group = flushPerChunk ? new FlushGroup() : undefined;
  const leftIn = new PassThrough();
  const rightOut = new PassThrough();
  const writes: Buffer[] = [];
  rightOut.on("data", (chunk: Buffer) => writes.push(chunk));
  const problems: FramingProblem[] = [];
  const right: NdjsonEndpoint = new NdjsonEndpoint(
    new PassThrough(),
    rightOut,
    { value() {}, problem() {}, end() {} },
    1024,
    group,
  );
  const left: NdjsonEndpoint = new NdjsonEndpoint(
    leftIn,
    new PassThrough(),
    {
      value(value) {
        if ((value as { synth?: unknown }).synth === true) right.write({ made: "here" }, left);
        right.write(value, left);
      },
      problem: (p) => problems.push(p),
      end() {},
    },
    1024,
    group,
  );
  const out = () => Buffer.concat(writes).toString("utf8");
  return { send: (text: string) => leftIn.write(Buffer.from(text, "utf8")), writes, out, problems, right, left };
}

describe("NdjsonEndpoint", () => {
  it("relays lines as their exact bytes: spacing, key order, escapes and non-ASCII kept", async () => {
    const r = relay();
    const lines = ['{ "b" : 1,"a":[1 , 2] }', '{"s":"\\u00e9 é 😀 \\n"}', '  {"x":1.50}'];
    r.send(`${lines.join("\n")}\n`);
    await nextBurst();
    assert.equal(r.out(), `${lines.join("\n")}\n`);
  });

  it("writes all lines of one chunk in one write", async () => {
    const r = relay();
    r.send('{"id":1}\n{"id":2}\n{"id":3}\n');
    await nextBurst();
    assert.equal(r.writes.length, 1);
    assert.equal(r.out(), '{"id":1}\n{"id":2}\n{"id":3}\n');
  });

  it("writes a large burst in parts of 16 messages, so the peer starts before the rest is parsed", async () => {
    const r = relay();
    const lines = Array.from({ length: 40 }, (_, i) => `{"id":${i},"synth":${i === 20}}`);
    r.send(`${lines.join("\n")}\n`);
    await nextBurst();
    const perWrite = r.writes.map((w) => w.toString("utf8").split("\n").length - 1);
    // 41 messages: the 40 relayed and the one the relay writes before id 20.
    assert.deepEqual(perWrite, [16, 16, 9]);
    assert.equal(r.out(), `${[...lines.slice(0, 20), '{"made":"here"}', ...lines.slice(20)].join("\n")}\n`);
  });

  it("in a flush group, what a chunk produced is written as soon as the chunk is handled", () => {
    const r = relay(true);
    r.send('{"id":1}\n{"id":2,"synth":true}\n{"id"');
    // PassThrough delivers synchronously here: no turn of the event loop has passed.
    assert.equal(r.out(), '{"id":1}\n{"made":"here"}\n{"id":2,"synth":true}\n');
    assert.equal(r.writes.length, 1);
    r.send(":3}\n");
    assert.equal(r.writes.length, 2);
    assert.equal(r.out(), '{"id":1}\n{"made":"here"}\n{"id":2,"synth":true}\n{"id":3}\n');
  });

  it("in a flush group, a chunk's writes arm no timer; a write from outside any chunk still leaves on the next turn", () => {
    const clock = sinon.useFakeTimers({ toFake: ["setImmediate", "clearImmediate"] });
    try {
      const grouped = relay(true);
      grouped.send('{"id":1}\n{"id":2}\n');
      assert.equal(grouped.writes.length, 1);
      assert.equal(clock.countTimers(), 0);
      // A write no chunk is carrying (as a grace timer's answer is) waits for the next turn.
      grouped.right.write({ id: 3 }, grouped.left);
      assert.equal(clock.countTimers(), 1);
      assert.equal(grouped.writes.length, 1);
      clock.runAll();
      assert.equal(grouped.out(), '{"id":1}\n{"id":2}\n{"id":3}\n');

      const alone = relay(false);
      alone.send('{"id":1}\n');
      assert.equal(clock.countTimers(), 1);
      assert.equal(alone.writes.length, 0);
      clock.runAll();
      assert.equal(alone.out(), '{"id":1}\n');
    } finally {
      clock.restore();
    }
  });

  it("in a flush group, an answer written for a bad line leaves with its chunk", () => {
    const group = new FlushGroup();
    const input = new PassThrough();
    const output = new PassThrough();
    const written: string[] = [];
    output.on("data", (chunk: Buffer) => written.push(chunk.toString("utf8")));
    const endpoint: NdjsonEndpoint = new NdjsonEndpoint(
      input,
      output,
      {
        value() {},
        problem: (problem) => endpoint.write({ error: problem.kind }, endpoint),
        end() {},
      },
      1024,
      group,
    );
    input.write('{"id":1}\nnot json\n');
    assert.deepEqual(written, ['{"error":"parse"}\n']);
  });

  it("a flush group flushes its members at a chunk's end, not one that left, and only once per chunk", () => {
    const group = new FlushGroup();
    const flushed: string[] = [];
    group.members.add({ flushQueued: () => flushed.push("kept") });
    const gone = { flushQueued: () => flushed.push("gone") };
    group.members.add(gone);
    group.members.delete(gone);
    group.handling = true;
    group.chunkEnd();
    group.chunkEnd(); // a second end without a start writes nothing
    assert.deepEqual(flushed, ["kept"]);
  });

  it("turns CRLF into LF, joins a line cut across chunks, and skips blank lines", async () => {
    const r = relay();
    r.send('{"id":1}\r\n\n   \n{"id"');
    r.send(':2}\n{"id":3}\r');
    r.send('\n{"id":4}\n');
    await nextBurst();
    assert.equal(r.out(), '{"id":1}\n{"id":2}\n{"id":3}\n{"id":4}\n');
  });

  it("never forwards a line that is not JSON, and keeps the order of relayed and written messages", async () => {
    const r = relay();
    r.send('{"id":1}\nnot json\n{"id":2,"synth":true}\n{"id":3}\n');
    await nextBurst();
    assert.equal(r.out(), '{"id":1}\n{"made":"here"}\n{"id":2,"synth":true}\n{"id":3}\n');
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.kind, "parse");
  });
});

describe("NdjsonEndpoint: a full output holds its writer back", () => {
  /** `from`'s lines are relayed to an output nobody reads (highWaterMark 16 KiB). */
  function stalled(holdAfterBytes: number) {
    const input = new PassThrough();
    const output = new PassThrough({ readableHighWaterMark: 1, writableHighWaterMark: 16 * 1024 });
    const quiet = { value() {}, problem() {}, end() {} };
    const to: NdjsonEndpoint = new NdjsonEndpoint(new PassThrough(), output, quiet, 1 << 20, undefined, holdAfterBytes);
    const relayed = { ...quiet, value: (v: unknown) => to.write(v, from) };
    const from: NdjsonEndpoint = new NdjsonEndpoint(input, new PassThrough(), relayed, 1 << 20);
    const line = (n: number) => `${JSON.stringify({ n, pad: "x".repeat(32 * 1024) })}\n`;
    return { input, output, send: (n: number) => input.write(line(n)) };
  }

  it("at once by default; with holdAfterBytes, only once that much waits in it", async () => {
    const eager = stalled(0);
    eager.send(1);
    await nextBurst();
    assert.equal(eager.input.isPaused(), true, "paused at the first full write");
    const patient = stalled(200 * 1024);
    for (let n = 0; n < 4; n++) patient.send(n);
    await nextBurst();
    assert.equal(patient.input.isPaused(), false, "still read with 128 KiB waiting");
    for (let n = 4; n < 8; n++) patient.send(n);
    await nextBurst();
    assert.equal(patient.input.isPaused(), true, "held back past 200 KiB");
  });
});
