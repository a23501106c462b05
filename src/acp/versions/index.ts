import type { JsonRpcNotification, JsonRpcResponse } from "../../wire/index.js";
import { cancelledError } from "../cancelled-answers.js";
import type { RequestJob, SessionWork } from "../engine-jobs.js";
import { V1_RULES } from "./v1.js";
import { V2_RULES } from "./v2.js";

export { V1_RULES };

/** What the idle / running `state_update` of a session means for its foreground work. */
export type WorkChange = "start" | "end" | undefined;

/** What the engine decides per ACP version, chosen at `initialize`; a new version is one file and one entry below. */
export interface VersionRules {
  /** A version the engine does not know: messages pass untouched, only the `$/cancel_request` bookkeeping stays. */
  readonly passThrough: boolean;
  /** Where our capability goes under `_meta` in `initialize`: the params field and the result field. */
  readonly capabilityField: { readonly client: string; readonly agent: string } | undefined;
  /** The prompt is the turn, ended by its (late) answer (v1); else work runs from `state_update` to the idle one (v2). */
  readonly promptIsTurn: boolean;
  /** The notice that a session's cancelled work is over, when its grace expired (v2; v1 has none). */
  cancelledWorkEnd(sessionId: string): JsonRpcNotification | undefined;
  /** What a `session/update` from the agent does to the session's foreground work (hot path: no allocation). */
  workChange(params: unknown): WorkChange;
  /** An agent request for background work the latest `state_update` lists (v2: not cancelled with the turn). */
  forBackground(method: string, params: unknown, work: SessionWork): boolean;
  /** The answer a cancelled request gets when its handler gave none. */
  cancelledAnswer(job: RequestJob, detail?: string): JsonRpcResponse;
  /** The handler's own answer to a cancelled request, made the version's cancelled answer. */
  normaliseCancelled(job: RequestJob, response: JsonRpcResponse): JsonRpcResponse;
}

/** A version the engine does not know: nothing rewritten or answered for a peer; only the bookkeeping. */
export const PASS_THROUGH_RULES: VersionRules = Object.freeze({
  ...V1_RULES, // no foreground work, as in v1
  passThrough: true,
  capabilityField: undefined,
  promptIsTurn: false,
  // Only reached for a request whose issuer is gone (never delivered): plain JSON-RPC.
  cancelledAnswer: cancelledError,
  normaliseCancelled: (_job: unknown, response: JsonRpcResponse) => response,
});

/** Every protocol version the engine knows, with its rules. A new version: its rules file, and one entry here. */
export const KNOWN_VERSIONS: ReadonlyMap<unknown, VersionRules> = new Map<unknown, VersionRules>([
  [1, V1_RULES],
  [2, V2_RULES],
]);
