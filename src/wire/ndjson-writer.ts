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
      // An ending stream never drains: 'finish', 'close' or 'error' end the wait too.
      const events = ["drain", "finish", "close", "error"] as const;
      const done = () => {
        for (const event of events) this.stream.off(event, done);
        resolve();
      };
      for (const event of events) this.stream.on(event, done);
    });
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.end();
  }
}
