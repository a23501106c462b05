import { handledDeferred, RESOLVED, rejected } from "./stream-promises.js";

/** Where a `MessageWritable` hands each message: synchronously, in order. */
export interface MessageSink {
  write(message: unknown): void;
  close(): void;
  abort(reason: unknown): void;
}

const standard = WritableStream.prototype;

const lockedError = () => new TypeError("Invalid state: WritableStream is locked");
const releasedError = () => new TypeError("Invalid state: Writer has been released");
const closedError = () => new TypeError("Invalid state: WritableStream is closed");

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** The state a `MessageWritable` shares with the writers it hands out. */
class Shared {
  state: "writable" | "closing" | "closed" | "errored" = "writable";
  error: unknown;
  writer: MessageWriter | undefined;
  /** `closed` promises of writers, waiting for the stream to close or fail. */
  readonly waiters = new Set<Waiter>();

  constructor(
    readonly sink: MessageSink,
    readonly stream: WritableStream<unknown>,
  ) {}

  /** A writer's write: the sink, at once. */
  write(message: unknown): Promise<void> {
    if (this.state !== "writable") return rejected(this.state === "errored" ? this.error : closedError());
    try {
      this.sink.write(message);
    } catch (error) {
      this.fail(error);
      return rejected(error);
    }
    return RESOLVED;
  }

  /** A writer's or the stream's close: the standard stream's, which calls the sink's in order. */
  close(): Promise<void> {
    if (this.state === "writable") this.state = "closing";
    return standard.close.call(this.stream);
  }

  abort(reason: unknown): Promise<void> {
    return standard.abort.call(this.stream, reason);
  }

  /** The standard stream's sink (when piped into): the same checks and the same sink. */
  sinkWrite(message: unknown): void {
    if (this.state === "errored") throw this.error;
    try {
      this.sink.write(message);
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }

  sinkClose(): void {
    if (this.state === "errored") throw this.error;
    this.state = "closed";
    this.sink.close();
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters.clear();
  }

  sinkAbort(reason: unknown): void {
    this.fail(reason);
    this.sink.abort(reason);
  }

  fail(error: unknown): void {
    if (this.state === "errored" || this.state === "closed") return;
    this.state = "errored";
    this.error = error;
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters.clear();
  }
}

/**
 * A WritableStream whose sink takes each message at once, for an SDK app to write to.
 *
 * SDK apps take a writer per message (`getWriter`, `write`, `releaseLock`). A standard writer
 * costs two promises to take and two rejected promises, each with a TypeError, to release,
 * and its write runs the stream's queue for a sink that has nothing to wait for. The writer
 * this stream hands out calls the sink directly and settles at once: the same order and the
 * same outcome, without that machinery. Everything else (piping into the stream, `close()`
 * and `abort()` on the stream itself) runs through the standard stream, on the same sink.
 */
export class MessageWritable extends WritableStream<unknown> {
  readonly #shared: Shared;

  constructor(sink: MessageSink) {
    const late: { shared?: Shared } = {};
    const shared = () => late.shared as Shared;
    super({
      write: (message) => shared().sinkWrite(message),
      close: () => shared().sinkClose(),
      abort: (reason) => shared().sinkAbort(reason),
    });
    this.#shared = late.shared = new Shared(sink, this);
  }

  override get locked(): boolean {
    return this.#shared.writer !== undefined || super.locked;
  }

  override getWriter(): WritableStreamDefaultWriter<unknown> {
    if (this.locked) throw lockedError();
    const writer = new MessageWriter(this.#shared);
    this.#shared.writer = writer;
    return writer as unknown as WritableStreamDefaultWriter<unknown>;
  }

  override close(): Promise<void> {
    return this.locked ? rejected(lockedError()) : this.#shared.close();
  }

  override abort(reason?: unknown): Promise<void> {
    return this.locked ? rejected(lockedError()) : this.#shared.abort(reason);
  }
}

/** The writer a `MessageWritable` hands out: the standard writer's interface, without its queue. */
class MessageWriter {
  #shared: Shared | undefined;
  #closed: (Waiter & { promise: Promise<void> }) | undefined;

  constructor(shared: Shared) {
    this.#shared = shared;
  }

  get closed(): Promise<void> {
    const shared = this.#shared;
    if (shared === undefined) return rejected(releasedError());
    if (shared.state === "closed") return RESOLVED;
    if (shared.state === "errored") return rejected(shared.error);
    if (this.#closed === undefined) {
      this.#closed = handledDeferred();
      shared.waiters.add(this.#closed);
    }
    return this.#closed.promise;
  }

  get ready(): Promise<void> {
    const shared = this.#shared;
    if (shared === undefined) return rejected(releasedError());
    return shared.state === "errored" ? rejected(shared.error) : RESOLVED;
  }

  get desiredSize(): number | null {
    const shared = this.#shared;
    if (shared === undefined) throw releasedError();
    return shared.state === "errored" ? null : shared.state === "writable" ? 1 : 0;
  }

  write(message: unknown): Promise<void> {
    return this.#shared === undefined ? rejected(releasedError()) : this.#shared.write(message);
  }

  close(): Promise<void> {
    return this.#shared === undefined ? rejected(releasedError()) : this.#shared.close();
  }

  abort(reason?: unknown): Promise<void> {
    return this.#shared === undefined ? rejected(releasedError()) : this.#shared.abort(reason);
  }

  releaseLock(): void {
    const shared = this.#shared;
    if (shared === undefined) return;
    this.#shared = undefined;
    if (shared.writer === this) shared.writer = undefined;
    if (this.#closed !== undefined) {
      shared.waiters.delete(this.#closed);
      this.#closed.reject(releasedError());
    }
  }
}
