import type { CancelReason } from "../core/index.js";
import type { JsonRpcId } from "../wire/index.js";
import type { Side } from "./methods.js";
import type { TurnPlugin } from "./turn-plugin.js";

/** Whether a side honours `$/cancel_request`: `auto` (its capability at `initialize`), or forced. */
export type CancelSupport = "auto" | "yes" | "no";

export interface PortOptions {
  /** An `@agentclientprotocol/sdk` app in this process: told to stop a handler with `$/cancel_request` only. */
  inProcess?: boolean;
  cancelSupport?: CancelSupport;
}

/** Following a turn the engine answered for the agent to its real end (docs/embedding.md). */
export interface TurnEndOptions {
  /** How long the agent has to end it; prompts wait that long. Default {@link DEFAULT_TURN_END_WINDOW_MS}. */
  windowMs?: number;
  /** Called each time the window passes with the turn not ended. Default: `fail`. */
  onStuck?: (turn: StuckTurn) => StuckVerdict;
}

export interface EngineOptions {
  /** How long a cancelled request may stay unanswered before the engine answers it. Default {@link DEFAULT_GRACE_MS}. */
  graceMs?: number;
  /** Deadline per method in milliseconds; expiry cancels the request with reason `deadline`. */
  deadlines?: Readonly<Record<string, number>>;
  /** Extension methods that stop or free something, never cancelled for anyone (docs/decisions.md, "Cleanup requests"). */
  cleanupMethods?: readonly string[];
  client?: PortOptions;
  agent?: PortOptions;
  onEvent?: (event: EngineEvent) => void;
  /**
   * v1: a client prompt for a session whose turn still runs is sent after the `session/cancel` that some editors leave
   * out (docs/decisions.md, "Sessions"). Off by default: claude-agent-acp and codex-acp queue such a prompt on purpose.
   */
  promptStopsTurn?: boolean;
  /** Follow a turn the engine answered for the agent to its real end (turn-aftermath.ts). Off when undefined. */
  turnEnd?: TurnEndOptions;
  /** @internal Turn plug-ins after `turnEnd`'s, in order (the bridge's answer rules): turn-plugin.ts. */
  plugins?: readonly TurnPlugin[];
  /** Clock for latency figures (default `performance.now`). */
  now?: () => number;
}

export { DEFAULT_GRACE_MS } from "../core/grace-timers.js";

export const DEFAULT_TURN_END_WINDOW_MS = 10_000;

/** The JSON-RPC error code of a prompt refused because its session's previous turn is stuck. */
export const TURN_STUCK_ERROR_CODE = -32010;

/** A stuck turn's window passed: `fail` the prompts held behind it, or `wait` one more window. */
export type StuckVerdict = "fail" | "wait";

/** A cancelled turn the agent has not ended within the window, as `onStuck` sees it (docs/embedding.md). */
export interface StuckTurn {
  readonly sessionId: string;
  /** In the client's id space. */
  readonly promptId: JsonRpcId;
  /** Since the engine answered the prompt for the agent. */
  readonly stuckForMs: number;
  /** Since the prompt went to the agent. */
  readonly turnAgeMs: number;
  /** 1 the first time the window passes, 2 the second, … */
  readonly escalation: number;
  readonly suppressedUpdates: number;
  readonly heldPrompts: number;
}

/** Something the engine did or saw, reported to `onEvent` when it is set. */
export type EngineEvent =
  | { type: "cancel"; side: Side; id: JsonRpcId; method: string; reason: CancelReason }
  | { type: "cancelled-at-birth"; side: Side; id: JsonRpcId; method: string }
  | { type: "answered-for-peer"; side: Side; id: JsonRpcId; method: string; reason: CancelReason | undefined }
  | { type: "late-reply-dropped"; side: Side; id: JsonRpcId }
  | { type: "emulated"; side: Side; what: string; id?: JsonRpcId }
  | { type: "problem"; side: Side; detail: string }
  /** A client `session/cancel` for a session with nothing in flight, not forwarded (decisions.md, "Sessions"). */
  | { type: "idle-cancel-dropped"; sessionId: string }
  // The real end of a turn (turn-aftermath.ts): only with `turnEnd` set.
  | { type: "turn-outlives-answer"; sessionId: string; id: JsonRpcId; windowMs: number }
  | { type: "late-update-suppressed"; sessionId: string; count: number }
  | { type: "late-request-refused"; sessionId: string; id: JsonRpcId; method: string }
  | { type: "prompt-held"; sessionId: string; id: JsonRpcId; behind: JsonRpcId }
  | { type: "turn-ended"; sessionId: string; id: JsonRpcId; how: string; afterMs: number; suppressedUpdates: number }
  | ({ type: "turn-stuck"; verdict: StuckVerdict } & StuckTurn)
  /** The protocol version the agent's `initialize` answer put in force; `rules: "pass-through"` for one we do not know. */
  | { type: "protocol-version"; version: unknown; rules: string };
