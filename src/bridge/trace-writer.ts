import { closeSync, writeSync } from "node:fs";
import { openPrivateFile } from "./private-file.js";
import { redactSecrets } from "./redact.js";

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

/**
 * Appends one JSON object per line: every message with its hop and time, plus notes. Synchronous,
 * so the trace is complete even if the bridge is killed. Private file, secrets redacted.
 */
export class TraceWriter {
  private fd: number | undefined;
  private readonly started = performance.now();
  private readonly replacer: ((key: string, value: unknown) => unknown) | undefined;

  /** Throws `RefusedFileError` (a link, another user's file, …) or the open's own error. */
  constructor(file: string, options: { keepSecrets?: boolean } = {}) {
    this.fd = openPrivateFile(file);
    this.replacer = options.keepSecrets === true ? undefined : redactSecrets;
  }

  message(hop: TraceHop, message: unknown): void {
    this.write({ hop, message });
  }

  note(note: string): void {
    this.write({ note });
  }

  close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    return Promise.resolve();
  }

  private write(fields: Omit<TraceEntry, "t">): void {
    if (this.fd === undefined) return;
    const entry: TraceEntry = { t: Math.round((performance.now() - this.started) * 1000) / 1000, ...fields };
    let line: string;
    try {
      line = JSON.stringify(entry, this.replacer);
    } catch (error) {
      // A message nested too deeply to serialise must not take the bridge down with it.
      line = JSON.stringify({ t: entry.t, hop: entry.hop, note: `message not traced: ${String(error)}` });
    }
    writeSync(this.fd, `${line}\n`);
  }
}
