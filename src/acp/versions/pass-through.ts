import { cancelledError } from "../cancelled-answers.js";
import type { JsonRpcResponse } from "../../wire/index.js";
import type { VersionRules } from "./rules.js";

/**
 * A protocol version the engine does not know. Nothing is rewritten and nothing is
 * answered for a peer: the engine only keeps the `$/cancel_request` bookkeeping (which ids
 * are in flight, so cancels are forwarded once and an EOF answers what is pending).
 */
export const PASS_THROUGH_RULES: VersionRules = Object.freeze({
  version: undefined,
  passThrough: true,
  capabilityField: undefined,
  promptIsTurn: false,
  workChange: () => undefined,
  forBackground: () => false,
  // Only reached for a request whose issuer is gone (never delivered): plain JSON-RPC.
  cancelledAnswer: cancelledError,
  normaliseCancelled: (_job: unknown, response: JsonRpcResponse) => response,
});
