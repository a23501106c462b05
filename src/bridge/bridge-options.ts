import type { Readable, Writable } from "node:stream";
import type { CancelSupport } from "../acp/index.js";
import type { LogLevel } from "./logger.js";

export interface BridgeOptions {
  /** The agent command and its arguments. */
  command: string;
  args: readonly string[];
  /** How long a cancelled request may stay unanswered before the bridge answers it (ms). */
  graceMs?: number;
  /** Deadlines per method (ms). */
  deadlines?: Readonly<Record<string, number>>;
  /** Extension methods that stop or free something: never cancelled for anyone (see docs/decisions.md). */
  cleanupMethods?: readonly string[];
  /** Longest accepted line, in bytes, in either direction. */
  maxLineBytes?: number;
  /** Force what each side is assumed to support (default: decided at initialize). */
  editorSupport?: CancelSupport;
  agentSupport?: CancelSupport;
  /** After closing the agent's stdin, how long to wait for it to exit before SIGTERM (ms). */
  exitGraceMs?: number;
  /** After SIGTERM, how long to wait before SIGKILL (ms). */
  killGraceMs?: number;
  trace?: string;
  logLevel?: LogLevel;
  logFile?: string;
  /** The editor's end; default process.stdin / process.stdout. */
  editorInput?: Readable;
  editorOutput?: Writable;
}

export const BRIDGE_DEFAULTS = {
  graceMs: 2000,
  maxLineBytes: 64 * 1024 * 1024,
  exitGraceMs: 2000,
  killGraceMs: 2000,
  logLevel: "warn" as LogLevel,
};
