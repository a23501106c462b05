const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

export interface LineSink {
  /**
   * A complete line (CR stripped, never blank). `bytes[start, end)` are its exact bytes,
   * valid only during the call: a relay can copy them without encoding `text` again. When
   * `bytes[end]` is LF, the line ended right there (no CR) in the same buffer.
   */
  line(text: string, bytes: Buffer, start: number, end: number): void;
  /**
   * A line longer than the cap was dropped; `bytes` is how long it got, `head` its first
   * bytes (up to HEAD_BYTES), so that a reader can still find, say, a request id there.
   */
  oversize(bytes: number, head: Buffer): void;
}

/** How much of a dropped line's start is kept for its `oversize` report. */
export const HEAD_BYTES = 1024;

/** Whether a line that starts with a byte above space may still be blank: never. */
function mayBeBlank(bytes: Buffer, start: number): boolean {
  return (bytes[start] as number) <= SPACE || (bytes[start] as number) >= 0x80;
}

/**
 * Splits a byte stream on LF. Lines are decoded only once complete, so a UTF-8 sequence
 * cut across chunks is never mangled. A line that lies whole within one chunk is decoded
 * straight out of it (no copy, no intermediate slice); only a line cut across chunks is
 * kept in parts. A line past `maxLineBytes` is discarded as it streams (memory stays
 * bounded) and reported once when its LF arrives.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  /** The start of the line being discarded. */
  private head: Buffer = Buffer.alloc(0);

  constructor(
    private readonly sink: LineSink,
    private readonly maxLineBytes: number,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(LF);
    if (newline !== -1 && (this.pendingBytes > 0 || this.discarding)) {
      // The end of a line that began in an earlier chunk.
      this.keep(chunk, 0, newline);
      this.finishLine();
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    const max = this.maxLineBytes;
    while (newline !== -1) {
      if (newline - start > max) this.sink.oversize(newline - start, headOf(chunk, start, newline));
      else if (newline > start) this.emit(chunk, start, newline);
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.keep(chunk, start, chunk.length);
  }

  /** End of input: a last line without LF still counts. */
  end(): void {
    if (this.pendingBytes > 0 || this.discarding) this.finishLine();
  }

  private keep(chunk: Buffer, from: number, to: number): void {
    if (to <= from) return;
    const length = to - from;
    if (this.discarding || this.pendingBytes + length > this.maxLineBytes) {
      if (!this.discarding) this.head = firstBytes([...this.parts, chunk.subarray(from, to)]);
      this.discarding = true;
      this.pendingBytes += length;
      this.parts = [];
      return;
    }
    this.parts.push(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
    this.pendingBytes += length;
  }

  private finishLine(): void {
    const bytes = this.pendingBytes;
    const parts = this.parts;
    const wasDiscarding = this.discarding;
    this.parts = [];
    this.pendingBytes = 0;
    this.discarding = false;
    if (wasDiscarding) {
      const head = this.head;
      this.head = Buffer.alloc(0);
      this.sink.oversize(bytes, head);
      return;
    }
    if (bytes === 0) return;
    // Copied: the parts alias chunks the caller may reuse.
    this.emit(Buffer.concat(parts, bytes), 0, bytes);
  }

  /** Emits `bytes[start, end)` (LF excluded) as a line unless it is blank. */
  private emit(bytes: Buffer, start: number, end: number): void {
    if (bytes[end - 1] === CR) end--;
    if (end <= start) return;
    // No encoding name: UTF-8 without the encoding lookup (a measurable share per line).
    const text = bytes.toString(undefined, start, end);
    if (mayBeBlank(bytes, start) && text.trim().length === 0) return;
    this.sink.line(text, bytes, start, end);
  }
}

/** A copy of at most HEAD_BYTES from `bytes[start, end)`: the chunk may be reused. */
function headOf(bytes: Buffer, start: number, end: number): Buffer {
  return Buffer.from(bytes.subarray(start, Math.min(end, start + HEAD_BYTES)));
}

/** A copy of the first HEAD_BYTES of `parts`, joined (without joining the rest). */
function firstBytes(parts: readonly Buffer[]): Buffer {
  const taken: Buffer[] = [];
  let length = 0;
  for (const part of parts) {
    if (length >= HEAD_BYTES) break;
    const piece = part.subarray(0, HEAD_BYTES - length);
    taken.push(piece);
    length += piece.length;
  }
  return Buffer.concat(taken, length);
}
