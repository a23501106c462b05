import type { CancelReason } from "../core/index.js";
import type { JsonRpcId, JsonRpcMessage } from "../wire/index.js";
import type { Side } from "./methods.js";
import type { StuckTurn, StuckVerdict, TurnEndOptions } from "./turn-aftermath.js";

/**
 * How far a side can be trusted with cancellation.
 * - `auto`: decided at `initialize` from the capability under `_meta`.
 * - `yes` / `no`: forced (a flag in the bridge, or known facts about the peer).
 */
export type CancelSupport = "auto" | "yes" | "no";

export interface PortOptions {
  /**
   * The side is an `@agentclientprotocol/sdk` app in this process. Such an app aborts a
   * handler on `$/cancel_request` but not on `session/cancel`, so the engine tells it with
   * a synthetic `$/cancel_request` whenever it must stop a handler.
   */
  inProcess?: boolean;
  cancelSupport?: CancelSupport;
}

/** Something the engine did or saw; only produced when `onEvent` is set. */
export type EngineEvent =
  | { type: "cancel"; side: Side; id: JsonRpcId; method: string; reason: CancelReason }
  | { type: "cancelled-at-birth"; side: Side; id: JsonRpcId; method: string }
  | { type: "answered-for-peer"; side: Side; id: JsonRpcId; method: string; reason: CancelReason | undefined }
  | { type: "late-reply-dropped"; side: Side; id: JsonRpcId }
  | { type: "emulated"; side: Side; what: string; id?: JsonRpcId }
  | { type: "problem"; side: Side; detail: string }
  // The real end of a turn (turn-aftermath.ts): only with `turnEnd` set.
  | { type: "turn-outlives-answer"; sessionId: string; id: JsonRpcId; windowMs: number }
  | { type: "late-update-suppressed"; sessionId: string; count: number }
  | { type: "late-request-refused"; sessionId: string; id: JsonRpcId; method: string }
  | { type: "prompt-held"; sessionId: string; id: JsonRpcId; behind: JsonRpcId }
  | { type: "turn-ended"; sessionId: string; id: JsonRpcId; how: string; afterMs: number; suppressedUpdates: number }
  | ({ type: "turn-stuck"; verdict: StuckVerdict } & StuckTurn)
  /** The protocol version the agent's `initialize` answer put in force; `rules: "pass-through"` for one we do not know. */
  | { type: "protocol-version"; version: unknown; rules: string };

export interface EngineOptions {
  /** How long a cancelled request may stay unanswered before the engine answers it. Default 2000 ms. */
  graceMs?: number;
  /** Deadline per method in milliseconds; expiry cancels the request with reason `deadline`. */
  deadlines?: Readonly<Record<string, number>>;
  /**
   * Extension methods that stop or free something, added to the built-in table
   * (`terminal/kill`, `terminal/release`, `terminal/cancel`, `tool_call/cancel`): the engine
   * never cancels them on anyone's behalf (see docs/decisions.md, "Cleanup requests").
   */
  cleanupMethods?: readonly string[];
  client?: PortOptions;
  agent?: PortOptions;
  onEvent?: (event: EngineEvent) => void;
  /**
   * Track a cancelled turn the engine answered for the agent (grace expired) to its real
   * end: suppress its late updates, refuse its late requests, hold the session's next
   * prompt until it ends, escalate when the window passes. Off when undefined.
   */
  turnEnd?: TurnEndOptions;
  /** Clock for latency figures (default `performance.now`). */
  now?: () => number;
}

export { DEFAULT_GRACE_MS } from "../core/grace-timers.js";

/** Where the engine sends messages: to the client side or to the agent side. */
export type Deliver = (side: Side, message: JsonRpcMessage) => void;
