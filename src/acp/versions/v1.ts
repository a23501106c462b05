import { cancelledAnswer, normaliseCancelled } from "../cancelled-answers.js";
import type { VersionRules } from "./rules.js";

/**
 * ACP v1: the prompt answer ends the turn, a cancelled prompt ends with stopReason
 * `cancelled`, capabilities live in `clientCapabilities` / `agentCapabilities`.
 */
export const V1_RULES: VersionRules = Object.freeze({
  version: 1,
  passThrough: false,
  capabilityField: Object.freeze({ client: "clientCapabilities", agent: "agentCapabilities" }),
  promptIsTurn: true,
  workChange: () => undefined,
  forBackground: () => false,
  cancelledAnswer,
  normaliseCancelled,
});
