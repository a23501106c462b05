import { parseArgs } from "node:util";
import type { CancelSupport } from "../acp/index.js";
import { type BridgeOptions, ON_STUCK_CHOICES, type OnStuck } from "../bridge/bridge-options.js";
import { LOG_LEVELS, type LogLevel } from "../bridge/logger.js";
import { MAX_TIMER_MS } from "../core/timer-limit.js";

/** A command-line mistake, reported with the usage text and exit status 2. */
export class UsageError extends Error {}

/** The longest --timeout, in whole seconds, that fits a timer. */
export const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

function nonNegativeInteger(flag: string, text: string, unit: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`${flag} takes a whole number of ${unit}, got '${text}'`);
  return value;
}

/** A duration flag in milliseconds: a whole number a timer can hold (see MAX_TIMER_MS). */
function durationMs(flag: string, text: string): number {
  const value = nonNegativeInteger(flag, text, "milliseconds");
  if (value > MAX_TIMER_MS) throw new UsageError(`${flag} takes at most ${MAX_TIMER_MS} milliseconds, got '${text}'`);
  return value;
}

function parseTimeout(text: string): [string, number] {
  const at = text.lastIndexOf("=");
  const method = text.slice(0, at);
  const seconds = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout takes METHOD=SECONDS (e.g. session/prompt=600), got '${text}'`);
  }
  if (seconds > MAX_TIMEOUT_SECONDS)
    throw new UsageError(`--timeout takes at most ${MAX_TIMEOUT_SECONDS} seconds, got '${text}'`);
  const ms = Math.round(seconds * 1000);
  // A deadline that rounds to no time at all is a typo, not a wish to fail every call at once.
  if (ms === 0) throw new UsageError(`--timeout takes at least 0.001 seconds (1 ms), got '${text}'`);
  return [method, ms];
}

function supportFlags(emulate: string | undefined, assume: string | undefined) {
  const sides = (flag: string, text: string | undefined) => {
    if (text === undefined) return [];
    if (text === "both") return ["editor", "agent"];
    if (text === "editor" || text === "agent") return [text];
    throw new UsageError(`${flag} takes editor, agent or both, got '${text}'`);
  };
  const support: { editor: CancelSupport; agent: CancelSupport } = { editor: "auto", agent: "auto" };
  for (const side of sides("--assume-support", assume)) support[side as "editor" | "agent"] = "yes";
  for (const side of sides("--emulate", emulate)) support[side as "editor" | "agent"] = "no";
  return support;
}

/** Parses `acp-cancel bridge [options] -- <agent command> [args...]`. */
export function parseBridgeArgs(argv: readonly string[]): BridgeOptions {
  const split = argv.indexOf("--");
  // The flags are read first, so a bad one (--help=1, -hv) is named even when '--' is missing.
  const { values, positionals } = parseArgs({
    args: split === -1 ? [...argv] : argv.slice(0, split),
    allowPositionals: true,
    strict: true,
    options: {
      "grace-ms": { type: "string" },
      "timeout": { type: "string", multiple: true },
      "cleanup-method": { type: "string", multiple: true },
      "max-line-bytes": { type: "string" },
      "emulate": { type: "string" },
      "assume-support": { type: "string" },
      "exit-grace-ms": { type: "string" },
      "kill-grace-ms": { type: "string" },
      "turn-end-window-ms": { type: "string" },
      "on-stuck": { type: "string" },
      "keep-turn-processes": { type: "boolean" },
      "trace": { type: "string" },
      "trace-secrets": { type: "boolean" },
      "otel": { type: "boolean" },
      "log-level": { type: "string" },
      "log-file": { type: "string" },
    },
  });
  if (split === -1 && positionals.length > 0) {
    const command = positionals.join(" ");
    throw new UsageError(`the agent command goes after '--' (acp-cancel bridge [options] -- ${command}), got '${command}' without it`);
  }
  if (split === -1 || split === argv.length - 1) {
    throw new UsageError("missing the agent command: acp-cancel bridge [options] -- <agent command> [args...]");
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' before '--'`);
  const logLevel = values["log-level"] ?? "warn";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level takes one of ${LOG_LEVELS.join(", ")}, got '${logLevel}'`);
  }
  const onStuck = values["on-stuck"];
  if (onStuck !== undefined && !(ON_STUCK_CHOICES as readonly string[]).includes(onStuck)) {
    throw new UsageError(`--on-stuck takes one of ${ON_STUCK_CHOICES.join(", ")}, got '${onStuck}'`);
  }
  const [command, ...args] = argv.slice(split + 1) as [string, ...string[]];
  if (command.trim() === "") throw new UsageError("the agent command after '--' is empty");
  const support = supportFlags(values.emulate, values["assume-support"]);
  const options: BridgeOptions = {
    command,
    args,
    deadlines: Object.fromEntries((values.timeout ?? []).map(parseTimeout)),
    editorSupport: support.editor,
    agentSupport: support.agent,
    logLevel: logLevel as LogLevel,
  };
  // Only the flags given become options: the bridge's defaults stand for the rest.
  const set = <K extends keyof BridgeOptions>(key: K, value: BridgeOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  const durations = [
    ["grace-ms", "graceMs"], ["exit-grace-ms", "exitGraceMs"], ["kill-grace-ms", "killGraceMs"], ["turn-end-window-ms", "turnEndWindowMs"],
  ] as const;
  for (const [flag, key] of durations) {
    const text = values[flag];
    if (text !== undefined) options[key] = durationMs(`--${flag}`, text);
  }
  const lineBytes = values["max-line-bytes"];
  const maxLineBytes = lineBytes === undefined ? undefined : nonNegativeInteger("--max-line-bytes", lineBytes, "bytes");
  if (maxLineBytes === 0) throw new UsageError("--max-line-bytes takes a positive number of bytes, got '0'");
  set("maxLineBytes", maxLineBytes);
  const cleanupMethods = values["cleanup-method"] ?? [];
  for (const method of cleanupMethods) {
    if (method === "" || method.startsWith("$/") || /\s/.test(method))
      throw new UsageError(`--cleanup-method takes a method name such as _myext/stop, got '${method}'`);
  }
  if (cleanupMethods.length > 0) options.cleanupMethods = cleanupMethods;
  set("onStuck", onStuck as OnStuck | undefined);
  if (values["keep-turn-processes"] === true) options.keepTurnProcesses = true;
  set("trace", values.trace);
  if (values["trace-secrets"] === true) {
    if (values.trace === undefined) throw new UsageError("--trace-secrets keeps secrets in a trace: it needs --trace FILE");
    options.traceSecrets = true;
  }
  set("logFile", values["log-file"]);
  if (values.otel === true) options.otel = true;
  return options;
}
