import { type HandledDeferred, handledDeferred, RESOLVED, rejected } from "./stream-promises.js";

/** What a `MessageReadable` tells its producer. */
export interface MessageSource {
  cancel(reason: unknown): void;
}

/** How the producer feeds a `MessageReadable`. */
export interface MessageFeed {
  enqueue(message: unknown): void;
  close(): void;
}

type Result = ReadableStreamReadResult<unknown>;
const DONE: Result = Object.freeze({ done: true, value: undefined });
const DONE_PROMISE = Promise.resolve(DONE);

const lockedError = () => new TypeError("Invalid state: ReadableStream is locked");
const releasedError = () => new TypeError("Invalid state: Reader released");

interface Pending {
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/** The queue a `MessageReadable` shares with its reader and its standard stream. */
class Shared implements MessageFeed {
  readonly queue: unknown[] = [];
  head = 0;
  open = true;
  reader: MessageReader | undefined;
  /** Reads of the reader waiting for a message. */
  readonly pending: Pending[] = [];
  /** The standard stream's controller while its pull waits for a message. */
  pulling: ReadableStreamDefaultController<unknown> | undefined;
  /** The reader's `closed`, once asked for: settled when the last message has been read. */
  closedWaiter: { resolve(): void } | undefined;

  constructor(readonly source: MessageSource) {}

  get size(): number {
    return this.queue.length - this.head;
  }

  shift(): unknown {
    const value = this.queue[this.head];
    this.queue[this.head++] = undefined;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (!this.open) this.ended();
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      // A queue that never drains completely must not keep every slot it ever used.
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return value;
  }

  enqueue(message: unknown): void {
    if (!this.open) return;
    const waiting = this.pending.shift();
    if (waiting !== undefined) return waiting.resolve({ done: false, value: message });
    const pulling = this.pulling;
    if (pulling !== undefined) {
      this.pulling = undefined;
      return pulling.enqueue(message);
    }
    this.queue.push(message);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    for (const waiting of this.pending.splice(0)) waiting.resolve(DONE);
    if (this.size === 0) {
      this.pulling?.close();
      this.ended();
    }
    this.pulling = undefined;
  }

  ended(): void {
    this.closedWaiter?.resolve();
    this.closedWaiter = undefined;
  }

  /** The standard stream's pull (when piped or iterated): the same queue. */
  pull(controller: ReadableStreamDefaultController<unknown>): void {
    if (this.size > 0) controller.enqueue(this.shift());
    else if (!this.open) controller.close();
    else this.pulling = controller;
  }

  cancel(reason: unknown): void {
    // As a standard stream: the producer hears of a cancel unless everything was already read.
    const unread = this.open || this.size > 0;
    this.open = false;
    this.queue.length = 0;
    this.head = 0;
    for (const waiting of this.pending.splice(0)) waiting.resolve(DONE);
    this.pulling = undefined;
    this.ended();
    if (unread) this.source.cancel(reason);
  }
}

/**
 * A ReadableStream of messages for an SDK app to read, fed by the engine.
 *
 * The reader it hands out takes each message straight from one queue: a read is one promise,
 * settled at once when a message is waiting, without the standard reader's read requests,
 * size bookkeeping and pull promise per message. Everything else (piping, iterating, `tee`,
 * `cancel()` on the stream itself) runs through the standard stream, on the same queue.
 */
export class MessageReadable extends ReadableStream<unknown> {
  readonly #shared: Shared;

  /** The stream, and the feed its producer enqueues into. */
  static create(source: MessageSource): { readable: MessageReadable; feed: MessageFeed } {
    const readable = new MessageReadable(source);
    return { readable, feed: readable.#shared };
  }

  private constructor(source: MessageSource) {
    const late: { shared?: Shared } = {};
    const shared = () => late.shared as Shared;
    super(
      {
        pull: (controller) => shared().pull(controller),
        cancel: (reason) => shared().cancel(reason),
      },
      { highWaterMark: 0 },
    );
    this.#shared = late.shared = new Shared(source);
  }

  override get locked(): boolean {
    return this.#shared.reader !== undefined || super.locked;
  }

  override getReader(): ReadableStreamDefaultReader<unknown>;
  override getReader(options: { mode: "byob" }): ReadableStreamBYOBReader;
  override getReader(options?: { mode?: "byob" }): ReadableStreamReader<unknown> {
    if (options?.mode !== undefined || super.locked) return super.getReader(options as { mode: "byob" });
    if (this.locked) throw lockedError();
    const reader = new MessageReader(this.#shared);
    this.#shared.reader = reader;
    return reader as unknown as ReadableStreamDefaultReader<unknown>;
  }

  override cancel(reason?: unknown): Promise<void> {
    return this.#shared.reader !== undefined ? rejected(lockedError()) : super.cancel(reason);
  }

  override pipeTo(destination: WritableStream<unknown>, options?: StreamPipeOptions): Promise<void> {
    return this.#shared.reader !== undefined ? rejected(lockedError()) : super.pipeTo(destination, options);
  }

  override pipeThrough<T>(
    transform: { writable: WritableStream<unknown>; readable: ReadableStream<T> },
    options?: StreamPipeOptions,
  ): ReadableStream<T> {
    if (this.#shared.reader !== undefined) throw lockedError();
    return super.pipeThrough(transform, options);
  }

  override tee(): [ReadableStream<unknown>, ReadableStream<unknown>] {
    if (this.#shared.reader !== undefined) throw lockedError();
    return super.tee();
  }

  /** Async iteration (Node's ReadableStream has it; the DOM typings do not). */
  values(options?: { preventCancel?: boolean }): AsyncIterableIterator<unknown> {
    if (this.#shared.reader !== undefined) throw lockedError();
    return standardValues.call(this, options);
  }

  [Symbol.asyncIterator](options?: { preventCancel?: boolean }): AsyncIterableIterator<unknown> {
    return this.values(options);
  }
}

const standardValues = (
  ReadableStream.prototype as unknown as {
    values(this: ReadableStream<unknown>, options?: { preventCancel?: boolean }): AsyncIterableIterator<unknown>;
  }
).values;

/** The reader a `MessageReadable` hands out: the standard reader's interface, one queue. */
class MessageReader {
  #shared: Shared | undefined;
  #closed: HandledDeferred | undefined;

  constructor(shared: Shared) {
    this.#shared = shared;
  }

  get closed(): Promise<void> {
    const shared = this.#shared;
    if (shared === undefined) return rejected(releasedError());
    if (!shared.open && shared.size === 0) return RESOLVED;
    if (this.#closed === undefined) {
      this.#closed = handledDeferred();
      shared.closedWaiter = this.#closed;
    }
    return this.#closed.promise;
  }

  read(): Promise<Result> {
    const shared = this.#shared;
    if (shared === undefined) return rejected(releasedError());
    if (shared.size > 0) return Promise.resolve({ done: false, value: shared.shift() });
    if (!shared.open) return DONE_PROMISE;
    return new Promise<Result>((resolve, reject) => shared.pending.push({ resolve, reject }));
  }

  cancel(reason?: unknown): Promise<void> {
    const shared = this.#shared;
    if (shared === undefined) return rejected(releasedError());
    shared.cancel(reason);
    return RESOLVED;
  }

  releaseLock(): void {
    const shared = this.#shared;
    if (shared === undefined) return;
    this.#shared = undefined;
    if (shared.reader === this) shared.reader = undefined;
    for (const waiting of shared.pending.splice(0)) waiting.reject(releasedError());
    if (this.#closed !== undefined && shared.closedWaiter === this.#closed) shared.closedWaiter = undefined;
    this.#closed?.reject(releasedError());
  }
}
