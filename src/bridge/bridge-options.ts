import type { Readable, Writable } from "node:stream";
import { type CancelSupport, DEFAULT_GRACE_MS, DEFAULT_TURN_END_WINDOW_MS, type EngineOptions } from "../acp/engine-options.js";
import { DEFAULT_MAX_LINE_BYTES } from "../wire/index.js";
import type { LogLevel } from "./logger.js";

/** `graceMs` and `cleanupMethods` as the engine's; `deadlines` over {@link DEFAULT_DEADLINES}. */
export interface BridgeOptions extends Pick<EngineOptions, "graceMs" | "deadlines" | "cleanupMethods"> {
  /** The agent command and its arguments. */
  command: string;
  args: readonly string[];
  /** Longest accepted line, in bytes, in either direction. */
  maxLineBytes?: number;
  /** Force what each side is assumed to support (default: decided at initialize). */
  editorSupport?: CancelSupport;
  agentSupport?: CancelSupport;
  /** After closing the agent's stdin, how long to wait for it to exit before SIGTERM (ms). */
  exitGraceMs?: number;
  /** After SIGTERM, how long to wait before SIGKILL (ms). */
  killGraceMs?: number;
  /** How long the agent has to end a cancelled turn the bridge answered (ms); its session's next prompt waits. */
  turnEndWindowMs?: number;
  /** What to do when that window passes: see {@link OnStuck}. Default `fail`. */
  onStuck?: OnStuck;
  /** Keep the processes a cancelled turn started (default: stopped; turn-processes.ts), e.g. a dev server. */
  keepTurnProcesses?: boolean;
  /** Write every message to this file (created mode 0600; see docs/bridge.md, "Traces"). */
  trace?: string;
  /** Keep secrets (env values, credentials) in the trace instead of redacting them. */
  traceSecrets?: boolean;
  /** Export every request as an OpenTelemetry span over OTLP/HTTP (also asked for by the `OTEL_*` variables). */
  otel?: boolean;
  logLevel?: LogLevel;
  logFile?: string;
  /** The editor's end; default process.stdin / process.stdout. */
  editorInput?: Readable;
  editorOutput?: Writable;
}

/** What the bridge does when an agent has not ended a cancelled turn within the window (docs/bridge.md, `--on-stuck`). */
export const ON_STUCK_CHOICES = ["fail", "kill-tools", "restart"] as const;
export type OnStuck = (typeof ON_STUCK_CHOICES)[number];

/** Deadlines unless `--timeout METHOD=SECONDS` replaces one: an agent silent at `initialize` must not hang the editor. */
export const DEFAULT_DEADLINES: Readonly<Record<string, number>> = { initialize: 60_000 };

export const BRIDGE_DEFAULTS = {
  graceMs: DEFAULT_GRACE_MS,
  turnEndWindowMs: DEFAULT_TURN_END_WINDOW_MS,
  onStuck: "fail" as OnStuck,
  maxLineBytes: DEFAULT_MAX_LINE_BYTES,
  exitGraceMs: 2000,
  killGraceMs: 2000,
  logLevel: "warn" as LogLevel,
};

/** The options with every default filled in. */
export type BridgeSettings = BridgeOptions & typeof BRIDGE_DEFAULTS & { deadlines: Readonly<Record<string, number>> };

export function resolveSettings(options: BridgeOptions): BridgeSettings {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as BridgeOptions;
  return { ...BRIDGE_DEFAULTS, ...given, deadlines: { ...DEFAULT_DEADLINES, ...options.deadlines } };
}

/** What the engine takes of the settings: an engine option the bridge exposes is passed on here. */
export function engineOptions(settings: BridgeSettings): EngineOptions {
  const { graceMs, deadlines, cleanupMethods = [], editorSupport = "auto", agentSupport = "auto" } = settings;
  return { graceMs, deadlines, cleanupMethods, client: { cancelSupport: editorSupport }, agent: { cancelSupport: agentSupport } };
}
