import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Leveled logging to stderr or a file; never to stdout, which carries only protocol. */
export class Logger {
  private readonly rank: number;
  readonly sink: Writable;

  constructor(level: LogLevel, file?: string) {
    this.rank = LOG_LEVELS.indexOf(level);
    this.sink = file === undefined ? process.stderr : createWriteStream(file, { flags: "a", mode: 0o600 });
  }

  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) <= this.rank;
  }

  log(level: LogLevel, text: string): void {
    if (this.enabled(level)) this.sink.write(`acp-cancel ${level}: ${text}\n`);
  }

  error(text: string): void {
    this.log("error", text);
  }
  warn(text: string): void {
    this.log("warn", text);
  }
  info(text: string): void {
    this.log("info", text);
  }
  debug(text: string): void {
    this.log("debug", text);
  }

  close(): Promise<void> {
    if (this.sink === process.stderr) return Promise.resolve();
    return new Promise((resolve) => this.sink.end(resolve));
  }
}
