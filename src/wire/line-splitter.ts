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
  /** A line longer than the cap was dropped; `bytes` is how long it got. */
  oversize(bytes: number): void;
}

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
      if (newline - start > max) this.sink.oversize(newline - start);
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
      this.sink.oversize(bytes);
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
