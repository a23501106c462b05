import type { JsonRpcResponse } from "../../wire/index.js";
import type { RequestJob } from "../request-record.js";
import type { SessionWork } from "../session-work.js";
import { V1_RULES } from "./v1.js";
import { V2_RULES } from "./v2.js";

/** What the idle / running `state_update` of a session means for its foreground work. */
export type WorkChange = "start" | "end" | undefined;

/**
 * Everything the engine decides differently per ACP protocol version, in one object chosen
 * once per connection (at `initialize`). The engine asks; it never tests a version number.
 * Adding a version is adding one file that exports such an object, and one entry in `KNOWN`.
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

/** Every protocol version the engine knows. A new version: its rules file, and one entry here. */
const KNOWN: ReadonlyMap<unknown, VersionRules> = new Map<unknown, VersionRules>([
  [1, V1_RULES],
  [2, V2_RULES],
]);

/** The rules for `version`, or undefined for a version the engine does not know. */
export function rulesFor(version: unknown): VersionRules | undefined {
  return KNOWN.get(version);
}
