import type { Writable } from "node:stream";

/** Writes JSON values as lines, reporting backpressure (`write`'s false, `drained()`) so a relay can pause. */
export class NdjsonWriter {
  private closed = false;
  private draining: Promise<void> | undefined = undefined;

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

  /** Resolves when the stream drains, ends or fails; every waiter shares one promise. */
  drained(): Promise<void> {
    if (!this.stream.writableNeedDrain) return Promise.resolve();
    this.draining ??= new Promise<void>((resolve) => {
      // An ending stream never drains: 'finish', 'close' or 'error' end the wait too.
      const events = ["drain", "finish", "close", "error"] as const;
      const done = () => {
        for (const event of events) this.stream.off(event, done);
        this.draining = undefined;
        resolve();
      };
      for (const event of events) this.stream.on(event, done);
    });
    return this.draining;
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.end();
  }
}
