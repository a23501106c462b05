import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import { escapeControl } from "../wire/index.js";
import { openPrivateFile } from "./private-file.js";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Leveled logging to stderr or a private file (never stdout: protocol only), control characters
 * escaped (texts carry peer input). The agent's stderr, piped into `sink`, stays raw.
 */
export class Logger {
  private readonly rank: number;
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

  close(): Promise<void> {
    if (this.sink === process.stderr) return Promise.resolve();
    return new Promise((resolve) => this.sink.end(resolve));
  }
}
