import { cancelledError } from "../cancelled-answers.js";
import type { JsonRpcResponse } from "../../wire/index.js";
import type { VersionRules } from "./rules.js";

/** A version the engine does not know: nothing rewritten or answered for a peer; only the bookkeeping. */
export const PASS_THROUGH_RULES: VersionRules = Object.freeze({
  passThrough: true,
  capabilityField: undefined,
  promptIsTurn: false,
  realTurnEnd: undefined,
  workChange: () => undefined,
  forBackground: () => false,
  cancelledWorkEnd: () => undefined,
  // Only reached for a request whose issuer is gone (never delivered): plain JSON-RPC.
  cancelledAnswer: cancelledError,
  normaliseCancelled: (_job: unknown, response: JsonRpcResponse) => response,
});
