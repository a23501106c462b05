import assert from "node:assert/strict";
import { MessageReadable } from "../../src/acp/message-readable.js";

function create() {
  const cancels: unknown[] = [];
  const { readable, feed } = MessageReadable.create({ cancel: (reason) => cancels.push(reason) });
  return { readable, feed, cancels };
}

describe("MessageReadable (the stream an SDK app reads, fed by the engine)", () => {
  it("delivers queued and later messages in order, then the end", async () => {
    const { readable, feed } = create();
    feed.enqueue(1);
    feed.enqueue(2);
    const reader = readable.getReader();
    const waiting = [reader.read(), reader.read(), reader.read()];
    feed.enqueue(3);
    feed.close();
    feed.enqueue("after the end");
    assert.deepEqual(await Promise.all(waiting), [
      { done: false, value: 1 },
      { done: false, value: 2 },
      { done: false, value: 3 },
    ]);
    assert.deepEqual(await reader.read(), { done: true, value: undefined });
    await reader.closed;
  });

  it("a reader waiting when the feed closes gets the end, and its closed promise settles", async () => {
    const { readable, feed } = create();
    const reader = readable.getReader();
    const closed = reader.closed;
    const read = reader.read();
    feed.close();
    assert.deepEqual(await read, { done: true, value: undefined });
    await closed;
  });

  it("closed settles only once the messages queued before the end are read", async () => {
    const { readable, feed } = create();
    const reader = readable.getReader();
    feed.enqueue("last");
    feed.close();
    let settled = false;
    void reader.closed.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false);
    assert.deepEqual(await reader.read(), { done: false, value: "last" });
    await reader.closed;
  });

  it("is locked while a reader is held; releasing rejects its waiting reads and frees the stream", async () => {
    const { readable, feed, cancels } = create();
    const reader = readable.getReader();
    assert.equal(readable.locked, true);
    assert.throws(() => readable.getReader(), TypeError);
    await assert.rejects(readable.cancel("x"), TypeError);
    await assert.rejects(readable.pipeTo(new WritableStream()), TypeError);
    assert.throws(() => readable.tee(), TypeError);
    assert.throws(() => readable.values(), TypeError);
    const waiting = reader.read();
    reader.releaseLock();
    await assert.rejects(waiting, TypeError);
    await assert.rejects(reader.read(), TypeError);
    assert.equal(readable.locked, false);
    feed.enqueue("kept");
    assert.deepEqual(await readable.getReader().read(), { done: false, value: "kept" });
    assert.deepEqual(cancels, []);
  });

  it("a cancel reaches the producer once, with its reason, and ends waiting reads", async () => {
    const { readable, feed, cancels } = create();
    const reader = readable.getReader();
    feed.enqueue("dropped");
    const closed = reader.closed;
    await reader.cancel("stop");
    await reader.cancel("again");
    await closed;
    assert.deepEqual(await reader.read(), { done: true, value: undefined });
    assert.deepEqual(cancels, ["stop"]);
  });

  it("can be piped and iterated through the standard stream, on the same queue", async () => {
    const { readable, feed } = create();
    feed.enqueue(1);
    const seen: unknown[] = [];
    const piping = readable.pipeTo(new WritableStream({ write: (message) => void seen.push(message) }));
    assert.equal(readable.locked, true);
    assert.throws(() => readable.getReader(), TypeError);
    await new Promise((resolve) => setImmediate(resolve));
    feed.enqueue(2);
    feed.enqueue(3);
    feed.close();
    await piping;
    assert.deepEqual(seen, [1, 2, 3]);

    const other = create();
    other.feed.enqueue("a");
    other.feed.enqueue("b");
    other.feed.close();
    const iterated: unknown[] = [];
    for await (const message of other.readable) iterated.push(message);
    assert.deepEqual(iterated, ["a", "b"]);
  });

  it("a long run of messages that never drains the queue completely arrives whole and in order", async () => {
    const { readable, feed } = create();
    const reader = readable.getReader();
    const count = 10_000;
    let next = 0;
    for (let read = 0; read < count; read++) {
      // Two in, one out while there are messages to send: the queue is not empty until the end.
      for (let i = 0; i < 2 && next < count; i++) feed.enqueue(next++);
      assert.deepEqual(await reader.read(), { done: false, value: read });
    }
    feed.close();
    assert.deepEqual(await reader.read(), { done: true, value: undefined });
  });

  it("a cancel after the end, with messages still unread, still reaches the producer", async () => {
    const { readable, feed, cancels } = create();
    feed.enqueue("unread");
    feed.close();
    await readable.getReader().cancel("late");
    assert.deepEqual(cancels, ["late"]);
  });

  it("cancelling the standard stream (no reader held) reaches the producer", async () => {
    const { readable, cancels } = create();
    await readable.cancel("bye");
    assert.deepEqual(cancels, ["bye"]);
  });
});
