import { cancelledAnswers } from "../cancelled-answers.js";
import type { VersionRules } from "./index.js";

/** ACP v1: the prompt answer ends the turn; a cancelled prompt ends with stopReason `cancelled`. */
export const V1_RULES: VersionRules = Object.freeze({
  passThrough: false,
  capabilityField: Object.freeze({ client: "clientCapabilities", agent: "agentCapabilities" }),
  promptIsTurn: true,
  workChange: () => undefined,
  forBackground: () => false,
  cancelledWorkEnd: () => undefined,
  ...cancelledAnswers(true),
});
