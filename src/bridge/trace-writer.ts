import { createWriteStream, type WriteStream } from "node:fs";

/** Where a traced message was going: from which end to which. */
export type TraceHop = "editor->bridge" | "bridge->agent" | "agent->bridge" | "bridge->editor";

export interface TraceEntry {
  /** Milliseconds since the bridge started. */
  t: number;
  hop?: TraceHop;
  message?: unknown;
  /** What the bridge did or saw, for lines that are not a message. */
  note?: string;
}

/** Appends one JSON object per line: every message with its hop and time, plus notes. */
export class TraceWriter {
  private readonly out: WriteStream;
  private readonly started = performance.now();

  constructor(file: string) {
    this.out = createWriteStream(file, { flags: "w" });
  }

  message(hop: TraceHop, message: unknown): void {
    this.write({ t: this.elapsed(), hop, message });
  }

  note(note: string): void {
    this.write({ t: this.elapsed(), note });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve));
  }

  private elapsed(): number {
    return Math.round((performance.now() - this.started) * 1000) / 1000;
  }

  private write(entry: TraceEntry): void {
    this.out.write(`${JSON.stringify(entry)}\n`);
  }
}
