import { PASS_THROUGH_RULES } from "./pass-through.js";
import type { VersionRules } from "./rules.js";
import { V1_RULES } from "./v1.js";
import { V2_RULES } from "./v2.js";

export type { RealTurnEnd, VersionRules, WorkChange } from "./rules.js";
export { PASS_THROUGH_RULES, V1_RULES };

/** Every protocol version the engine knows. A new version: its rules file, and one entry here. */
const KNOWN: ReadonlyMap<unknown, VersionRules> = new Map<unknown, VersionRules>([
  [1, V1_RULES],
  [2, V2_RULES],
]);

/** The rules for `version`, or undefined for a version the engine does not know. */
export function rulesFor(version: unknown): VersionRules | undefined {
  return KNOWN.get(version);
}
