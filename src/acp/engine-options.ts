import type { JsonRpcMessage } from "../wire/index.js";
import type { EngineEvent, StuckTurn, StuckVerdict } from "./events.js";
import type { Side } from "./methods.js";

/** Whether a side honours `$/cancel_request`: `auto` (its capability at `initialize`), or forced. */
export type CancelSupport = "auto" | "yes" | "no";

export interface PortOptions {
  /** An `@agentclientprotocol/sdk` app in this process: told to stop a handler with `$/cancel_request` only. */
  inProcess?: boolean;
  cancelSupport?: CancelSupport;
}

/** How the engine follows a cancelled turn it answered for the agent to the agent's real end of it. */
export interface TurnEndOptions {
  /** How long the agent has to end a turn the engine answered (prompts wait that long). Default 10000 ms. */
  windowMs?: number;
  /** Called each time the window passes with the turn not ended. Default: `fail`. */
  onStuck?: (turn: StuckTurn) => StuckVerdict;
}

export interface EngineOptions {
  /** How long a cancelled request may stay unanswered before the engine answers it. Default 2000 ms. */
  graceMs?: number;
  /** Deadline per method in milliseconds; expiry cancels the request with reason `deadline`. */
  deadlines?: Readonly<Record<string, number>>;
  /** Extension methods that stop or free something, never cancelled for anyone (docs/decisions.md, "Cleanup requests"). */
  cleanupMethods?: readonly string[];
  client?: PortOptions;
  agent?: PortOptions;
  onEvent?: (event: EngineEvent) => void;
  /** Follow a turn the engine answered for the agent to its real end (turn-aftermath.ts). Off when undefined. */
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
