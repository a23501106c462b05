import type { JsonRpcResponse } from "../../wire/index.js";
import { cancelledError } from "../cancelled-answers.js";
import type { VersionRules } from "./rules.js";
import { V1_RULES } from "./v1.js";
import { V2_RULES } from "./v2.js";

export type { VersionRules, WorkChange } from "./rules.js";
export { V1_RULES };

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
