import type { CancelReason } from "../core/index.js";
import type { JsonRpcId } from "../wire/index.js";
import type { Side } from "./methods.js";

/** A stuck turn's window passed: `fail` the prompts held behind it, or `wait` one more window. */
export type StuckVerdict = "fail" | "wait";

/** A cancelled turn the agent has not ended within the window, as the escalation hook sees it. */
export interface StuckTurn {
  readonly sessionId: string;
  /** The stuck prompt's id (in the client's id space). */
  readonly promptId: JsonRpcId;
  /** Milliseconds since the engine answered the prompt for the agent. */
  readonly stuckForMs: number;
  /** Milliseconds since the prompt went to the agent: the turn's age. */
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
  // The real end of a turn (turn-aftermath.ts): only with `turnEnd` set.
  | { type: "turn-outlives-answer"; sessionId: string; id: JsonRpcId; windowMs: number }
  | { type: "late-update-suppressed"; sessionId: string; count: number }
  | { type: "late-request-refused"; sessionId: string; id: JsonRpcId; method: string }
  | { type: "prompt-held"; sessionId: string; id: JsonRpcId; behind: JsonRpcId }
  | { type: "turn-ended"; sessionId: string; id: JsonRpcId; how: string; afterMs: number; suppressedUpdates: number }
  | ({ type: "turn-stuck"; verdict: StuckVerdict } & StuckTurn)
  /** The protocol version the agent's `initialize` answer put in force; `rules: "pass-through"` for one we do not know. */
  | { type: "protocol-version"; version: unknown; rules: string };
