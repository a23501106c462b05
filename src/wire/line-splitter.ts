const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

export interface LineSink {
  /**
   * A complete line (CR stripped, never blank); `bytes[start, end)` are its exact bytes, valid
   * only during the call. `bytes[end]` is LF when the line ended right there.
   */
  line(text: string, bytes: Buffer, start: number, end: number): void;
  /** A line over the cap was dropped: its length, and its first HEAD_BYTES (a request id may be there). */
  oversize(bytes: number, head: Buffer): void;
}

export const HEAD_BYTES = 1024;

/**
 * Splits a byte stream on LF, decoding a line only once complete (a line within one chunk
 * straight out of it). A line past `maxLineBytes` is discarded as it streams and reported once.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
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
      if (newline - start > max) this.sink.oversize(newline - start, firstBytes([chunk.subarray(start, newline)]));
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
    const { pendingBytes: bytes, parts, discarding, head } = this;
    this.parts = [];
    this.pendingBytes = 0;
    this.discarding = false;
    if (discarding) {
      this.head = Buffer.alloc(0);
      this.sink.oversize(bytes, head);
    } else if (bytes > 0) {
      // Copied: the parts alias chunks the caller may reuse.
      this.emit(Buffer.concat(parts, bytes), 0, bytes);
    }
  }

  /** Emits `bytes[start, end)` (LF excluded) as a line unless it is blank. */
  private emit(bytes: Buffer, start: number, end: number): void {
    if (bytes[end - 1] === CR) end--;
    if (end <= start) return;
    // No encoding name: UTF-8 without the encoding lookup (a measurable share per line).
    const text = bytes.toString(undefined, start, end);
    // A line that starts with an ASCII byte above space is never blank: no trim for it.
    const first = bytes[start] as number;
    if ((first <= SPACE || first >= 0x80) && text.trim().length === 0) return;
    this.sink.line(text, bytes, start, end);
  }
}

/** A copy of the first HEAD_BYTES of `parts` (the chunks may be reused), without joining the rest. */
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
