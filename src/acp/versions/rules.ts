import type { JsonRpcNotification, JsonRpcResponse } from "../../wire/index.js";
import type { RequestJob } from "../request-record.js";
import type { SessionWork } from "../session-work.js";

/** What the idle / running `state_update` of a session means for its foreground work. */
export type WorkChange = "start" | "end" | undefined;

/** What really ends a turn the engine answered for the agent (see `VersionRules.realTurnEnd`). */
export type RealTurnEnd = "prompt-answer" | "idle" | undefined;

/**
 * Everything the engine decides differently per ACP protocol version, in one object chosen
 * once per connection (at `initialize`). The engine asks; it never tests a version number.
 * Adding a version is adding one file that exports such an object, and one entry in `index.ts`.
 */
export interface VersionRules {
  /** The protocol version these rules implement; undefined for the pass-through rules. */
  readonly version: number | undefined;
  /**
   * A version the engine does not know: every message passes untouched. Only the
   * `$/cancel_request` bookkeeping stays (ids in flight, cancels forwarded, EOF answers).
   */
  readonly passThrough: boolean;
  /** Where our capability goes under `_meta` in `initialize`: the params field and the result field. */
  readonly capabilityField: { readonly client: string; readonly agent: string } | undefined;
  /**
   * True when the `session/prompt` request itself is the session's turn (v1: its answer ends
   * the turn). False when the answer only acknowledges insertion and the turn is foreground
   * work reported by `state_update` (v2).
   */
  readonly promptIsTurn: boolean;
  /**
   * What really ends a turn the engine gave up on for the agent: `prompt-answer`
   * (v1: the agent's own answer to the prompt, however late), `idle` (v2: the session's idle
   * `state_update`; the prompt's answer only acknowledges insertion), or undefined: no
   * aftermath at all (pass-through).
   */
  readonly realTurnEnd: RealTurnEnd;
  /**
   * The notification that tells the client a session's cancelled foreground
   * work is over, sent when the engine gives up on it for the agent (its grace expired).
   * Undefined where the prompt is the turn (v1: its cancelled answer tells the client).
   */
  cancelledWorkEnd(sessionId: string): JsonRpcNotification | undefined;
  /** What a `session/update` from the agent does to the session's foreground work (hot path: no allocation). */
  workChange(params: unknown): WorkChange;
  /**
   * True when an agent request made while foreground work is open belongs to background work
   * the work's latest `state_update` lists (v2: `session/cancel` does not cover it).
   */
  forBackground(method: string, params: unknown, work: SessionWork): boolean;
  /** The answer a cancelled request gets when its handler gave none. */
  cancelledAnswer(job: RequestJob, detail?: string): JsonRpcResponse;
  /** The handler's own answer to a cancelled request, made the version's cancelled answer. */
  normaliseCancelled(job: RequestJob, response: JsonRpcResponse): JsonRpcResponse;
}
