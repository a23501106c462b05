import type { JsonRpcMessage } from "../wire/index.js";
import type { EngineEvent, StuckTurn, StuckVerdict } from "./events.js";
import type { Side } from "./methods.js";

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

/** How the engine follows a cancelled turn it answered for the agent to the agent's real end of it. */
export interface TurnEndOptions {
  /**
   * How long the agent has to really end a cancelled turn after the engine answered it
   * (its grace expired). Prompts for that session wait at most this long. Default 10000 ms.
   */
  windowMs?: number;
  /** Called each time the window passes with the turn not ended. Default: `fail`. */
  onStuck?: (turn: StuckTurn) => StuckVerdict;
}

/** Counters of the turns followed past their answer (`turnEnd`); zero while no agent ignored a cancel. */
export interface AftermathStats {
  /** Turns answered for the agent and then tracked to their real end. */
  turnsTracked: number;
  lateUpdatesSuppressed: number;
  lateRequestsRefused: number;
  promptsHeld: number;
  /** Times a window passed with the turn not ended. */
  stuckEscalations: number;
}

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

export const DEFAULT_TURN_END_WINDOW_MS = 10_000;

/** The JSON-RPC error code of a prompt refused because its session's previous turn is stuck. */
export const TURN_STUCK_ERROR_CODE = -32010;

/** Where the engine sends messages: to the client side or to the agent side. */
export type Deliver = (side: Side, message: JsonRpcMessage) => void;
