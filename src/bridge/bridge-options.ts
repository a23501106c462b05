import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Readable, Writable } from "node:stream";
import { type CancelSupport, DEFAULT_GRACE_MS, DEFAULT_TURN_END_WINDOW_MS, type EngineOptions } from "../acp/engine-options.js";
import type { CancelReason } from "../core/index.js";
import { MAX_TIMER_MS } from "../core/timer-limit.js";
import { KILL_GRACE_MS } from "../os/index.js";
import { DEFAULT_MAX_LINE_BYTES } from "../wire/index.js";
import { LOG_LEVELS, type LogLevel } from "./logger.js";

/** `graceMs` and `cleanupMethods` as the engine's; `deadlines` over {@link DEFAULT_DEADLINES}. */
export interface BridgeOptions extends Pick<EngineOptions, "graceMs" | "deadlines" | "cleanupMethods" | "promptStopsTurn"> {
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
const ON_STUCK_CHOICES = ["fail", "kill-tools", "restart"] as const;
type OnStuck = (typeof ON_STUCK_CHOICES)[number];

/** Deadlines unless `--timeout METHOD=SECONDS` replaces one: an agent silent at `initialize` must not hang the editor. */
const DEFAULT_DEADLINES: Readonly<Record<string, number>> = { initialize: 60_000 };

const BRIDGE_DEFAULTS = {
  graceMs: DEFAULT_GRACE_MS,
  turnEndWindowMs: DEFAULT_TURN_END_WINDOW_MS,
  onStuck: "fail" as OnStuck,
  maxLineBytes: DEFAULT_MAX_LINE_BYTES,
  exitGraceMs: 2000,
  killGraceMs: KILL_GRACE_MS,
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
  const { graceMs, deadlines, cleanupMethods = [], editorSupport = "auto", agentSupport = "auto", promptStopsTurn = false } = settings;
  const ports = { client: { cancelSupport: editorSupport }, agent: { cancelSupport: agentSupport } };
  return { graceMs, deadlines, cleanupMethods, promptStopsTurn, ...ports };
}

// ---- the command-line flags: each is one entry of BRIDGE_FLAGS ----------------------------

/** A command-line mistake, reported with the usage text and exit status 2. */
export class UsageError extends Error {}

/** One `acp-cancel bridge` flag: its help and what it sets. A new flag is one entry of {@link BRIDGE_FLAGS}. */
interface BridgeFlag {
  /** The value's name in the help (`N`, `FILE`); a flag without one is a switch. */
  readonly value?: string;
  /** Each value given counts; otherwise the last one does. */
  readonly repeatable?: boolean;
  /** Its help after the flag's column, one line a line. */
  readonly help: string;
  /** Sets its option from one value (a switch's is ""); a bad value throws a UsageError naming `flag`. */
  readonly set: (options: BridgeOptions, text: string, flag: string) => void;
  /** For a flag that sets a deadline: the reason its cancel gives, and what the answer cancelled at it says. */
  readonly deadline?: { reason: CancelReason; detail(method: string, settings: BridgeSettings, flag: string): string };
}

/** The longest --timeout, in whole seconds, that fits a timer. */
const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

function wholeNumber(flag: string, text: string, unit: string, max = Infinity): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`${flag} takes a whole number of ${unit}, got '${text}'`);
  if (value > max) throw new UsageError(`${flag} takes at most ${max} ${unit}, got '${text}'`);
  return value;
}

/** A duration flag in milliseconds: a whole number a timer can hold (see MAX_TIMER_MS). */
function duration(key: "graceMs" | "exitGraceMs" | "killGraceMs" | "turnEndWindowMs", help: string): BridgeFlag {
  return {
    value: "N",
    help,
    set: (options, text, flag) => {
      options[key] = wholeNumber(flag, text, "milliseconds", MAX_TIMER_MS);
    },
  };
}

function oneOf<T extends string>(flag: string, text: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(text)) return text as T;
  throw new UsageError(`${flag} takes one of ${choices.join(", ")}, got '${text}'`);
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

const SUPPORT_KEYS = { editor: ["editorSupport"], agent: ["agentSupport"], both: ["editorSupport", "agentSupport"] } as const;

/** `--emulate` (support `no`) and `--assume-support` (`yes`, unless emulated): editor, agent or both. */
function support(given: "yes" | "no", help: string): BridgeFlag {
  return {
    value: "SIDE",
    help,
    set: (options, text, flag) => {
      if (!Object.hasOwn(SUPPORT_KEYS, text)) throw new UsageError(`${flag} takes editor, agent or both, got '${text}'`);
      for (const key of SUPPORT_KEYS[text as keyof typeof SUPPORT_KEYS]) if (options[key] !== "no") options[key] = given;
    },
  };
}

/** A flag whose value is kept as given (a file name). */
function text(key: "trace" | "logFile", help: string): BridgeFlag {
  return { value: "FILE", help, set: (options, file) => Object.assign(options, { [key]: file }) };
}

/** A switch: it turns `key` on. */
function on(key: "keepTurnProcesses" | "otel" | "promptStopsTurn", help: string): BridgeFlag {
  return { help, set: (options) => Object.assign(options, { [key]: true }) };
}

/** Every flag of `acp-cancel bridge`, in the order its help lists (and this parser applies) them. */
const BRIDGE_FLAGS: Readonly<Record<string, BridgeFlag>> = {
  "grace-ms": duration("graceMs", `wait N ms for a cancelled request's answer before answering it
(default ${BRIDGE_DEFAULTS.graceMs})`),
  "timeout": {
    value: "METHOD=SECONDS",
    repeatable: true,
    help: `deadline for a method, e.g. --timeout fs/read_text_file=30 (repeatable);
the request is then cancelled and its answer names the deadline.
initialize has one by default: ${(DEFAULT_DEADLINES.initialize ?? 0) / 1000} s (--timeout initialize=SECONDS
changes it), so an agent that never answers it cannot leave the editor
waiting; other methods have none unless set`,
    set: (options, text) => {
      const [method, ms] = parseTimeout(text);
      options.deadlines = { ...options.deadlines, [method]: ms };
    },
    deadline: {
      reason: "deadline",
      detail: (method, settings, flag) =>
        `the agent did not answer ${method} within ${(settings.deadlines[method] ?? 0) / 1000} s ` +
        `(the bridge's deadline: ${flag} ${method}=SECONDS changes it)`,
    },
  },
  "cleanup-method": {
    value: "METHOD",
    repeatable: true,
    help: "never cancel METHOD for anyone, like terminal/release (repeatable)",
    set: (options, method, flag) => {
      if (method === "" || method.startsWith("$/") || /\s/.test(method))
        throw new UsageError(`${flag} takes a method name such as _myext/stop, got '${method}'`);
      options.cleanupMethods = [...(options.cleanupMethods ?? []), method];
    },
  },
  "max-line-bytes": {
    value: "N",
    help: `reject lines longer than N bytes (default ${BRIDGE_DEFAULTS.maxLineBytes})`,
    set: (options, text, flag) => {
      options.maxLineBytes = wholeNumber(flag, text, "bytes");
      if (options.maxLineBytes === 0) throw new UsageError(`${flag} takes a positive number of bytes, got '0'`);
    },
  },
  "emulate": support("no", "treat SIDE (editor, agent, both) as lacking $/cancel_request support"),
  "assume-support": support("yes", "treat SIDE (editor, agent, both) as fully supporting cancellation"),
  "exit-grace-ms": duration("exitGraceMs", `after closing the agent's stdin, wait N ms before SIGTERM (default ${BRIDGE_DEFAULTS.exitGraceMs})`),
  "kill-grace-ms": duration("killGraceMs", `after SIGTERM, wait N ms before SIGKILL (default ${BRIDGE_DEFAULTS.killGraceMs})`),
  "turn-end-window-ms": duration("turnEndWindowMs", `after answering a cancelled turn for an agent that ignored the cancel, wait up
to N ms for the agent to really end it (default ${BRIDGE_DEFAULTS.turnEndWindowMs}); meanwhile its late
updates are dropped and the session's next prompt waits`),
  "on-stuck": {
    value: "ACTION",
    help: `when that window passes: fail (default: the waiting prompt gets an error
naming the stuck turn), kill-tools (stop what the agent started during the
turn, SIGTERM then SIGKILL, never the agent; then wait once more) or restart
(restart the agent; everything pending for it gets an error)`,
    set: (options, text, flag) => {
      options.onStuck = oneOf<OnStuck>(flag, text, ON_STUCK_CHOICES);
    },
  },
  "prompt-stops-turn": on("promptStopsTurn", `a prompt for a session whose turn still runs stops that turn first, as
if the editor had sent session/cancel (default: passed as it is; some
agents queue it behind the turn)`),
  "keep-turn-processes": on("keepTurnProcesses", `keep what a cancelled turn started (default: processes the agent started
during that turn and still running 0.5 s after its cancelled answer get
SIGTERM, then SIGKILL; Linux only)`),
  "trace": text("trace", `write every message with its hop and time to FILE (JSONL). The file is
created mode 0600; a symbolic link, another user's file or a file with
other hard links is refused (exit 73); the user's own file is replaced.
Secrets are redacted: env values, credential headers, anything under a
key named like a token, secret, password or API key, such a flag's value
in args (--api-key=…, --token …), a URL's password and such query values`),
  "trace-secrets": {
    help: `keep those secrets in the trace, unredacted (prompts and file contents
are always in it)`,
    set: (options, _text, flag) => {
      if (options.trace === undefined) throw new UsageError(`${flag} keeps secrets in a trace: it needs --trace FILE`);
      options.traceSecrets = true;
    },
  },
  "otel": on("otel", `export every request as an OpenTelemetry span over OTLP/HTTP (needs
@opentelemetry/api, @opentelemetry/sdk-trace-node,
@opentelemetry/exporter-trace-otlp-http and @opentelemetry/resources;
OTEL_EXPORTER_OTLP_ENDPOINT etc. apply, and setting it also turns this on).
Joins the editor's trace from params._meta.traceparent, else starts one`),
  "log-level": {
    value: "LEVEL",
    help: "error, warn (default), info or debug (debug prints a summary on exit)",
    set: (options, text, flag) => {
      options.logLevel = oneOf<LogLevel>(flag, text, LOG_LEVELS);
    },
  },
  "log-file": text("logFile", "write logs and the agent's stderr to FILE instead of stderr"),
};

const FLAGS = Object.entries(BRIDGE_FLAGS);

/** The help's options, the flags in one column, from {@link BRIDGE_FLAGS}. */
export function bridgeFlagsHelp(): string {
  return FLAGS.map(([name, flag]) => {
    const column = `--${name} ${flag.value ?? ""}`.trimEnd().padEnd(27);
    return `  ${column}${flag.help.replaceAll("\n", `\n${" ".repeat(29)}`)}`;
  }).join("\n");
}

/** What an answer cancelled for `reason` on `method` says, when a flag's deadline gave that reason. */
export function deadlineDetail(reason: CancelReason, method: string, settings: BridgeSettings): string | undefined {
  for (const [name, flag] of FLAGS) if (flag.deadline?.reason === reason) return flag.deadline.detail(method, settings, `--${name}`);
  return undefined;
}

/** Parses `acp-cancel bridge [options] -- <agent command> [args...]`. */
export function parseBridgeArgs(argv: readonly string[]): BridgeOptions {
  const split = argv.indexOf("--");
  const types: ParseArgsConfig["options"] = Object.fromEntries(
    FLAGS.map(([name, flag]) => [name, { type: flag.value === undefined ? "boolean" : "string", multiple: true }]),
  );
  // The flags are read first, so a bad one (--help=1, -hv) is named even when '--' is missing.
  const { values, positionals } = parseArgs({
    args: split === -1 ? [...argv] : argv.slice(0, split),
    allowPositionals: true,
    strict: true,
    options: types,
  });
  if (split === -1 && positionals.length > 0) {
    const command = positionals.join(" ");
    throw new UsageError(`the agent command goes after '--' (acp-cancel bridge [options] -- ${command}), got '${command}' without it`);
  }
  if (split === -1 || split === argv.length - 1) {
    throw new UsageError("missing the agent command: acp-cancel bridge [options] -- <agent command> [args...]");
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' before '--'`);
  const [command, ...args] = argv.slice(split + 1) as [string, ...string[]];
  // Only the flags given become options: the bridge's defaults stand for the rest.
  const options: BridgeOptions = { command, args, deadlines: {}, editorSupport: "auto", agentSupport: "auto", logLevel: "warn" };
  for (const [name, flag] of FLAGS) {
    const given = (values[name] ?? []) as (string | boolean)[];
    for (const text of flag.repeatable === true ? given : given.slice(-1)) flag.set(options, typeof text === "string" ? text : "", `--${name}`);
  }
  if (command.trim() === "") throw new UsageError("the agent command after '--' is empty");
  return options;
}
