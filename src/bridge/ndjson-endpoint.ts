import type { Readable, Writable } from "node:stream";
import { type FramingProblem, readNdjson } from "../wire/index.js";

export interface EndpointHandlers {
  value(value: unknown): void;
  problem(problem: FramingProblem): void;
  end(error?: Error): void;
}

/**
 * One end of the bridge: a byte stream in, a byte stream out. While a value it read is
 * being handled, a message identical to it (the same object) is relayed as the original
 * line, so pass-through costs no re-serialisation and keeps the sender's exact bytes.
 */
export class NdjsonEndpoint {
  private currentValue: unknown;
  private currentLine = "";
  private paused: Readable | undefined;
  private corked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.output.uncork();
  };

  constructor(
    readonly input: Readable,
    readonly output: Writable,
    handlers: EndpointHandlers,
    maxLineBytes: number,
  ) {
    readNdjson(
      input,
      {
        value: (value, line) => {
          this.currentValue = value;
          this.currentLine = line;
          try {
            handlers.value(value);
          } finally {
            this.currentValue = undefined;
            this.currentLine = "";
          }
        },
        problem: handlers.problem,
        end: handlers.end,
      },
      { maxLineBytes },
    );
    output.on("error", () => {});
  }

  /** The original line of `value` if this endpoint is handling it right now. */
  rawLineOf(value: unknown): string | undefined {
    return value === this.currentValue ? this.currentLine : undefined;
  }

  /**
   * Writes one message. When the output is full, pauses `source` (the stream whose
   * messages fill it) until it drains, so memory stays bounded.
   */
  write(message: unknown, rawLine: string | undefined, source: Readable): void {
    const output = this.output;
    if (output.destroyed || output.writableEnded) return;
    if (!this.corked) {
      // Many messages arrive per input chunk: one write syscall per tick instead of per message.
      this.corked = true;
      output.cork();
      process.nextTick(this.uncork);
    }
    const ok = output.write(`${rawLine ?? JSON.stringify(message)}\n`);
    if (!ok && this.paused === undefined) {
      this.paused = source;
      source.pause();
      output.once("drain", () => {
        this.paused?.resume();
        this.paused = undefined;
      });
    }
  }

  end(): void {
    if (!this.output.destroyed && !this.output.writableEnded) this.output.end();
  }
}
