import assert from "node:assert/strict";
import { once } from "node:events";
import { Writable } from "node:stream";
import sinon from "sinon";
import { NdjsonWriter } from "../../src/wire/ndjson-writer.js";

/** A Writable that records what it receives and completes each write at once. */
function sinkStream(): { stream: Writable; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString("utf8"));
      callback();
    },
  });
  return { stream, written };
}

/**
 * A Writable with a tiny highWaterMark that holds each write's callback until
 * release() is called, so backpressure builds up deterministically.
 */
function slowStream(highWaterMark = 4) {
  const written: string[] = [];
  const pending: Array<(error?: Error | null) => void> = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString("utf8"));
      pending.push(callback);
    },
  });
  /** Completes held writes (and any that Node feeds in afterwards) asynchronously. */
  async function release(): Promise<void> {
    while (pending.length > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      pending.shift()?.();
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { stream, written, pending, release };
}

async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe("NdjsonWriter", () => {
  afterEach(() => {
    sinon.restore();
  });

  it("writes each value as JSON followed by a single LF", async () => {
    const { stream, written } = sinkStream();
    const writer = new NdjsonWriter(stream);
    assert.equal(writer.write({ jsonrpc: "2.0", id: 1, result: null }), true);
    assert.equal(writer.write([1, "two"]), true);
    assert.equal(writer.write("s"), true);
    assert.equal(writer.write(3), true);
    assert.equal(writer.write(null), true);
    writer.end();
    await once(stream, "finish");
    assert.deepEqual(written, [
      '{"jsonrpc":"2.0","id":1,"result":null}\n',
      '[1,"two"]\n',
      '"s"\n',
      "3\n",
      "null\n",
    ]);
  });

  it("keeps a value with embedded newlines on one line", async () => {
    const { stream, written } = sinkStream();
    const writer = new NdjsonWriter(stream);
    writer.write({ text: "a\nb\r\nc", emoji: "😀" });
    writer.end();
    await once(stream, "finish");
    const output = written.join("");
    assert.equal(output.indexOf("\n"), output.length - 1);
    assert.deepEqual(JSON.parse(output), { text: "a\nb\r\nc", emoji: "😀" });
  });

  it("end() ends the stream once; later writes return false and write nothing", async () => {
    const { stream, written } = sinkStream();
    const endSpy = sinon.spy(stream, "end");
    const writer = new NdjsonWriter(stream);
    writer.write(1);
    writer.end();
    assert.equal(stream.writableEnded, true);
    assert.equal(writer.write(2), false);
    writer.end();
    assert.equal(endSpy.callCount, 1);
    await once(stream, "finish");
    assert.deepEqual(written, ["1\n"]);
  });

  it("returns false when the stream was ended by someone else", () => {
    const { stream } = sinkStream();
    const writer = new NdjsonWriter(stream);
    stream.end();
    assert.equal(writer.write(1), false);
  });

  it("returns false once the stream is destroyed, and end() does not call stream.end", () => {
    const { stream } = sinkStream();
    const endSpy = sinon.spy(stream, "end");
    const writer = new NdjsonWriter(stream);
    stream.destroy();
    assert.equal(writer.write(1), false);
    writer.end();
    assert.equal(endSpy.callCount, 0);
  });

  it("absorbs a stream error and refuses further writes", async () => {
    const { stream, written } = sinkStream();
    const writer = new NdjsonWriter(stream);
    const closed = new Promise((resolve) => stream.on("close", resolve));
    assert.doesNotThrow(() => stream.destroy(new Error("EPIPE")));
    await closed;
    assert.equal(writer.write({ late: true }), false);
    writer.end();
    assert.deepEqual(written, []);
  });

  it("reports no backpressure on a fast stream", async () => {
    const { stream } = sinkStream();
    const writer = new NdjsonWriter(stream);
    assert.equal(writer.write({ a: 1 }), true);
    assert.equal(stream.writableNeedDrain, false);
    assert.equal(await isSettled(writer.drained()), true);
  });

  describe("backpressure", () => {
    it("write returns false and the stream needs a drain past the highWaterMark", () => {
      const { stream } = slowStream(4);
      const writer = new NdjsonWriter(stream);
      assert.equal(stream.writableNeedDrain, false);
      assert.equal(writer.write({ abc: 1 }), false);
      assert.equal(stream.writableNeedDrain, true);
    });

    it("a write under the highWaterMark returns true", () => {
      const { stream } = slowStream(64);
      const writer = new NdjsonWriter(stream);
      assert.equal(writer.write(1), true);
      assert.equal(stream.writableNeedDrain, false);
    });

    it("drained() waits for 'drain', then the stream needs none", async () => {
      const { stream, written, release } = slowStream(4);
      const writer = new NdjsonWriter(stream);
      writer.write({ first: 1 });
      writer.write({ second: 2 });
      assert.equal(stream.writableNeedDrain, true);
      const drained = writer.drained();
      assert.equal(await isSettled(drained), false, "resolved while writes were still held");
      await release();
      assert.equal(await isSettled(drained), true);
      assert.equal(stream.writableNeedDrain, false);
      assert.deepEqual(written, ['{"first":1}\n', '{"second":2}\n']);
      assert.equal(await isSettled(writer.drained()), true, "resolves at once when not needed");
    });

    it("several drained() waiters share one listener, all resolve on one drain and leave no listeners", async () => {
      const { stream, release } = slowStream(4);
      const writer = new NdjsonWriter(stream);
      const drainListeners = stream.listenerCount("drain");
      const closeListeners = stream.listenerCount("close");
      writer.write({ x: 1 });
      const waiters = [writer.drained(), writer.drained(), writer.drained()];
      assert.equal(stream.listenerCount("drain"), drainListeners + 1, "one shared wait, not one per waiter");
      await release();
      for (const waiter of waiters) assert.equal(await isSettled(waiter), true);
      assert.equal(stream.listenerCount("drain"), drainListeners);
      assert.equal(stream.listenerCount("close"), closeListeners);
    });

    it("drained() resolves when the stream closes instead of draining", async () => {
      const { stream } = slowStream(4);
      const writer = new NdjsonWriter(stream);
      writer.write({ x: 1 });
      const drained = writer.drained();
      assert.equal(await isSettled(drained), false);
      stream.destroy(new Error("gone"));
      assert.equal(await isSettled(drained), true);
      assert.equal(writer.write(1), false);
      assert.equal(stream.writableNeedDrain, false);
    });

    it("drained() still resolves if the writer is ended while waiting", async () => {
      const { stream, release } = slowStream(4);
      const writer = new NdjsonWriter(stream);
      writer.write({ x: 1 });
      const drained = writer.drained();
      const closed = new Promise((resolve) => stream.on("close", resolve));
      writer.end();
      assert.equal(stream.writableNeedDrain, false);
      await release();
      await closed; // an ending stream emits no 'drain'; the waiter resolves on 'close'
      assert.equal(await isSettled(drained), true);
    });

    // An ending stream never emits 'drain'; with autoDestroy: false it never emits 'close'
    // either, so 'finish' must end the wait.
    it("drained() resolves after end() on a stream that does not auto-destroy", async () => {
      const pending: Array<() => void> = [];
      const stream = new Writable({
        highWaterMark: 4,
        autoDestroy: false,
        write(_chunk, _encoding, callback) {
          pending.push(() => callback());
        },
      });
      const writer = new NdjsonWriter(stream);
      writer.write({ x: 1 });
      const drained = writer.drained();
      const finished = once(stream, "finish");
      writer.end();
      for (const complete of pending.splice(0)) complete();
      await finished;
      assert.equal(stream.writableNeedDrain, false);
      assert.equal(await isSettled(drained), true);
    });

    it("works with a stream whose write callback is delayed by a timer", async () => {
      const clock = sinon.useFakeTimers({ toFake: ["setTimeout"] });
      try {
        const written: string[] = [];
        const stream = new Writable({
          highWaterMark: 2,
          write(chunk: Buffer, _encoding, callback) {
            written.push(chunk.toString("utf8"));
            setTimeout(callback, 50);
          },
        });
        const writer = new NdjsonWriter(stream);
        assert.equal(writer.write("abc"), false);
        const drained = writer.drained();
        await clock.tickAsync(49);
        assert.equal(await isSettled(drained), false);
        await clock.tickAsync(1);
        assert.equal(await isSettled(drained), true);
        assert.equal(stream.writableNeedDrain, false);
        assert.deepEqual(written, ['"abc"\n']);
      } finally {
        clock.restore();
      }
    });
  });
});
