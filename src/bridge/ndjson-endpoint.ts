import type { Readable, Writable } from "node:stream";
import { type NdjsonReaderHandlers, readNdjson } from "../wire/index.js";

/** What the endpoint hands on: each value (its bytes stay here, for a relay), framing problems, the end. */
type EndpointHandlers = Pick<NdjsonReaderHandlers, "problem" | "end"> & { value(value: unknown): void };

const LF = 0x0a;
const NEWLINE = Buffer.from("\n");
/** A burst leaves in parts, so the peer starts on the first while the rest is parsed (bench 1e: 0.6x a byte relay whole, 1x). */
const PART_MESSAGES = 16;
const PART_BYTES = 64 * 1024;

/** The endpoints of one relay: what a chunk read by any member produced leaves when it is handled, as a byte relay's. */
export class FlushGroup {
  readonly members = new Set<Pick<NdjsonEndpoint, "flushQueued">>();
  /** A chunk's lines are being handled: their writes wait for `chunkEnd`. */
  handling = false;

  /** The chunk is handled: everything it produced leaves now. */
  chunkEnd(): void {
    if (!this.handling) return;
    this.handling = false;
    for (const member of this.members) member.flushQueued();
  }
}

/**
 * One end of the bridge: a byte stream in, a byte stream out. A message relayed unchanged (the
 * value being handled) is copied as its line's bytes, consecutive lines of one chunk as one
 * slice. Output leaves once per input chunk of its `FlushGroup` (else on the next turn of the
 * loop), in parts of PART_MESSAGES.
 */
export class NdjsonEndpoint {
  /** The value being handled, and its line: `bytes[start, end)`. */
  private current: { value: unknown; bytes: Buffer; start: number; end: number } | undefined;

  private readonly pieces: Buffer[] = [];
  /** The byte range being extended. */
  private openChunk: Buffer | undefined;
  private openFrom = 0;
  private openTo = 0;
  private queuedMessages = 0;
  private queuedBytes = 0;
  private flushScheduled = false;
  private source: Readable | undefined;
  private paused: Readable | undefined;
  private readonly flush = () => {
    this.flushScheduled = false;
    this.flushQueued();
  };
  private readonly resume = () => {
    this.paused?.resume();
    this.paused = undefined;
  };

  constructor(
    readonly input: Readable,
    readonly output: Writable,
    handlers: EndpointHandlers,
    maxLineBytes: number,
    private readonly group?: FlushGroup,
    /** A full output pauses the writer's input only once this much waits in it (0: at once). */
    private readonly holdAfterBytes = 0,
  ) {
    readNdjson(
      input,
      {
        value: (value, _line, bytes, start, end) => {
          if (group !== undefined) group.handling = true;
          this.current = { value, bytes, start, end };
          try {
            handlers.value(value);
          } finally {
            this.current = undefined;
          }
        },
        problem: (framing) => {
          if (group !== undefined) group.handling = true;
          handlers.problem(framing);
        },
        end: handlers.end,
        chunkEnd: () => group?.chunkEnd(),
      },
      { maxLineBytes },
    );
    group?.members.add(this);
    output.on("error", () => {});
  }

  /**
   * Queues one message for the peer behind `from`; when it is the value `from` is handling, its
   * original bytes are relayed. A full output pauses `from`'s input (what fills it) until it drains,
   * once `holdAfterBytes` wait in it.
   */
  write(message: unknown, from: NdjsonEndpoint): void {
    if (this.output.destroyed || this.output.writableEnded) return;
    this.source = from.input;
    const current = from.current;
    if (current !== undefined && message === current.value) {
      this.appendRange(current.bytes, current.start, current.end);
      this.queuedBytes += current.end - current.start + 1;
    } else {
      const line = Buffer.from(`${JSON.stringify(message)}\n`);
      this.closeRange();
      this.pieces.push(line);
      this.queuedBytes += line.length;
    }
    if (++this.queuedMessages >= PART_MESSAGES || this.queuedBytes >= PART_BYTES) {
      this.flushQueued();
      return;
    }
    if (!this.flushScheduled && this.group?.handling !== true) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Appends a line's bytes and its LF, extending the open range when they follow it. */
  private appendRange(bytes: Buffer, start: number, end: number): void {
    const withLf = bytes[end] === LF;
    const to = withLf ? end + 1 : end;
    if (bytes === this.openChunk && start === this.openTo) {
      this.openTo = to;
    } else {
      this.closeRange();
      this.openChunk = bytes;
      this.openFrom = start;
      this.openTo = to;
    }
    if (!withLf) {
      // A CRLF line, or a line that was joined from several chunks: its LF is not there.
      this.closeRange();
      this.pieces.push(NEWLINE);
    }
  }

  private closeRange(): void {
    const chunk = this.openChunk;
    if (chunk === undefined) return;
    this.openChunk = undefined;
    this.pieces.push(this.openFrom === 0 && this.openTo === chunk.length ? chunk : chunk.subarray(this.openFrom, this.openTo));
  }

  /** Writes what is queued now, as a byte relay writes each chunk it reads. */
  flushQueued(): void {
    this.queuedMessages = 0;
    this.queuedBytes = 0;
    this.closeRange();
    const pieces = this.pieces;
    if (pieces.length === 0) return;
    const data = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    pieces.length = 0;
    const output = this.output;
    if (output.destroyed || output.writableEnded) return;
    const ok = output.write(data);
    if (!ok && this.paused === undefined && this.source !== undefined && output.writableLength >= this.holdAfterBytes) {
      this.paused = this.source;
      this.paused.pause();
      output.once("drain", this.resume);
    }
  }

  /** Writes what is queued, then ends the output (and leaves its group). */
  end(): void {
    this.group?.members.delete(this);
    this.flushQueued();
    if (!this.output.destroyed && !this.output.writableEnded) this.output.end();
  }
}
