import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import { escapeControl } from "../wire/index.js";
import { openPrivateFile } from "./private-file.js";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Leveled logging to stderr or a file; never to stdout, which carries only protocol. A log file
 * is opened as a trace is (private, never through a link: `openPrivateFile`, which throws
 * `RefusedFileError`), but appended to. Every line has its control characters escaped: log
 * texts carry peer input (a bad line's preview, an error's detail). The agent's stderr, piped
 * into `sink`, stays raw: it is the agent's own diagnostics.
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
