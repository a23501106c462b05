import type { Writable } from "node:stream";

/**
 * Writes JSON values as lines. Honours backpressure by reporting it (`needsDrain`,
 * `drained()`) instead of buffering without bound, so a relay can pause its source.
 */
export class NdjsonWriter {
  private closed = false;

  constructor(private readonly stream: Writable) {
    stream.on("error", () => {
      this.closed = true;
    });
  }

  /** Returns false when the stream asked us to wait for 'drain'. */
  write(value: unknown): boolean {
    if (this.closed || this.stream.destroyed || this.stream.writableEnded) return false;
    return this.stream.write(`${JSON.stringify(value)}\n`);
  }

  get needsDrain(): boolean {
    return this.stream.writableNeedDrain;
  }

  drained(): Promise<void> {
    if (!this.stream.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("close", done);
    });
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.end();
  }
}
