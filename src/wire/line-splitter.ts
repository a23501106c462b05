const LF = 0x0a;
const CR = 0x0d;

export interface LineSink {
  /** A complete line (CR stripped, never empty). */
  line(text: string): void;
  /** A line longer than the cap was dropped; `bytes` is how long it got. */
  oversize(bytes: number): void;
}

/**
 * Splits a byte stream on LF. Lines are decoded only once complete, so a UTF-8 sequence
 * cut across chunks is never mangled. A line past `maxLineBytes` is discarded as it
 * streams (memory stays bounded) and reported once when its LF arrives.
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
    for (;;) {
      const newline = chunk.indexOf(LF, start);
      if (newline === -1) {
        this.keep(chunk, start, chunk.length);
        return;
      }
      this.keep(chunk, start, newline);
      this.finishLine();
      start = newline + 1;
    }
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
    const whole = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, bytes);
    const end = whole[bytes - 1] === CR ? bytes - 1 : bytes;
    const text = whole.toString("utf8", 0, end);
    if (text.trim().length > 0) this.sink.line(text);
  }
}
