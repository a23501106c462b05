import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import { escapeControl } from "../wire/index.js";
import { openPrivateFile } from "./private-file.js";

/** How many warnings of one kind are printed before they are only counted. */
const REPEATS_SHOWN = 3;

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Leveled logging to stderr or a private file (never stdout: protocol only), control characters
 * escaped (texts carry peer input). The agent's stderr, piped into `sink`, stays raw.
 */
export class Logger {
  private readonly rank: number;
  private readonly repeats = new Map<string, number>();
  readonly sink: Writable;

  constructor(level: LogLevel, file?: string) {
    this.rank = LOG_LEVELS.indexOf(level);
    this.sink = file === undefined ? process.stderr : createWriteStream(file, { fd: openPrivateFile(file, "append") });
  }

  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) <= this.rank;
  }

  log(level: LogLevel, text: string): void {
    if (this.enabled(level)) this.sink.write(`acp-cancel ${level}: ${escapeControl(text)}\n`);
  }

  readonly error = (text: string): void => this.log("error", text);
  readonly warn = (text: string): void => this.log("warn", text);
  readonly info = (text: string): void => this.log("info", text);
  readonly debug = (text: string): void => this.log("debug", text);

  /** A warning that may flood (late answers): the first of each kind (numbers, quoted values out) printed, the rest counted. */
  warnRepeated(text: string): void {
    if (!this.enabled("warn")) return;
    const kind = text.replace(/"[^"]*"|\d+/g, "…");
    const seen = (this.repeats.get(kind) ?? 0) + 1;
    this.repeats.set(kind, seen);
    if (seen <= REPEATS_SHOWN) this.warn(text);
  }

  /** Sums up each kind of repeated warning that was cut short, then closes the file. */
  close(): Promise<void> {
    for (const [kind, seen] of this.repeats) {
      if (seen > REPEATS_SHOWN) this.warn(`${seen - REPEATS_SHOWN} more warnings like "${kind}" were not printed (${seen} in all)`);
    }
    this.repeats.clear();
    if (this.sink === process.stderr) return Promise.resolve();
    return new Promise((resolve) => this.sink.end(resolve));
  }
}
