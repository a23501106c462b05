import { z } from "zod";
import { firstIssue } from "../wire/index.js";
import type { RateCounter } from "./guardian-counter.js";

// The rules file (docs/a2a.md "Rules file"): the first rule whose conditions all match decides, else `default`.
const NameList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const RuleSchema = z.strictObject({
  decision: z.enum(["allow", "deny"]),
  /** The asking agent's name (context.from.agent.name), or a list of names. */
  from: NameList.optional(),
  /** The target agent's name (context.to.agent.name), or a list of names. */
  to: NameList.optional(),
  /** A regular expression the task id must match. */
  taskId: z.string().min(1).max(1024).optional(),
  rate: z.strictObject({ max: z.number().int().min(0), windowMs: z.number().int().positive() }).optional(),
  message: z.string().max(4096).optional(),
  reasonCode: z.array(z.string().max(256)).max(32).optional(),
});

/** A bearer token bound to the one agent (`context.from.agent.name`) that may use it. */
const AgentTokenSchema = z.strictObject({ agent: z.string().min(1), token: z.string().min(1) });

export const GuardianRulesSchema = z.strictObject({
  default: z.enum(["allow", "deny"]),
  /** A shared token: its requests are let in, their `from` unverified. With `token` or `tokens`, others get 401. */
  token: z.string().min(1).optional(),
  tokens: z.array(AgentTokenSchema).max(10_000).optional(),
  rules: z.array(RuleSchema).max(1000).default([]),
});

export type GuardianRules = z.input<typeof GuardianRulesSchema>;
/** Rules as parsed: every default filled in. */
export type ParsedRules = z.infer<typeof GuardianRulesSchema>;

/** A rules file that cannot be used, with a message naming what is wrong. */
export class RulesError extends Error {
  override readonly name = "RulesError";
}

/** Parses and checks rules (from a file's text or an object); throws RulesError naming the problem. */
export function parseGuardianRules(input: string | unknown): ParsedRules {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch (error) {
      throw new RulesError(`the rules are not JSON: ${(error as Error).message}`);
    }
  }
  const parsed = GuardianRulesSchema.safeParse(value);
  if (!parsed.success) throw new RulesError(`invalid rules: ${firstIssue(parsed.error, "the rules")}`);
  const seen = new Set<string>(parsed.data.token === undefined ? [] : [parsed.data.token]);
  parsed.data.tokens?.forEach(({ token }, index) => {
    if (seen.has(token)) throw new RulesError(`invalid rules: tokens.${index}.token: the same token is given twice`);
    seen.add(token);
  });
  parsed.data.rules.forEach((rule, index) => {
    if (rule.taskId === undefined) return;
    try {
      new RegExp(rule.taskId, "u");
    } catch (error) {
      throw new RulesError(`invalid rules: rules.${index}.taskId: ${(error as Error).message}`);
    }
  });
  return parsed.data;
}

/** The `rule` of a verdict decided by the identity check, not by a rule or the default. */
const IDENTITY_RULE = -2;

/** What the rules decide for one cancel. */
export interface RuleVerdict {
  decision: "allow" | "deny";
  /** Index of the deciding rule, -1 for the default, {@link IDENTITY_RULE} for a `from` its token does not prove. */
  rule: number;
  message: string;
  reasonCode: string[];
}

export interface CancelFacts {
  /** The asking agent's name as the question declares it. */
  from: string;
  to: string;
  taskId: string;
  /** The agent the caller's token is bound to: `from` must then be this name, and `rate` counts by it. */
  agent?: string;
}

/** Decides by `rules`; the counts the `rate` conditions need go through `counter`. */
export function ruleBook(rules: ParsedRules, counter: RateCounter) {
  const patterns = rules.rules.map((rule) => (rule.taskId === undefined ? undefined : new RegExp(rule.taskId, "u")));
  return async (facts: CancelFacts, now = Date.now()): Promise<RuleVerdict> => {
    if (facts.agent !== undefined && facts.from !== facts.agent) {
      return {
        decision: "deny",
        rule: IDENTITY_RULE,
        message: `the question is from '${facts.from.slice(0, 64)}' but its token belongs to '${facts.agent}'`,
        reasonCode: ["from-not-token-agent"],
      };
    }
    const asker = facts.agent ?? facts.from;
    for (const [index, rule] of rules.rules.entries()) {
      if (!nameMatches(rule.from, facts.from) || !nameMatches(rule.to, facts.to)) continue;
      if (patterns[index]?.test(facts.taskId) === false) continue;
      if (rule.rate !== undefined) {
        const count = await counter.hit(`rule:${index}:${asker}`, rule.rate.windowMs, now);
        if (count <= rule.rate.max) continue;
      }
      const why = rule.rate !== undefined ? "rate" : "rule";
      return {
        decision: rule.decision,
        rule: index,
        message: rule.message ?? `${rule.decision} by ${why} ${index}`,
        reasonCode: rule.reasonCode ?? [`rule-${index}`],
      };
    }
    const decision = rules.default;
    return { decision, rule: -1, message: `${decision} by default`, reasonCode: ["default"] };
  };
}

function nameMatches(condition: string | string[] | undefined, name: string): boolean {
  return condition === undefined || [condition].flat().includes(name);
}
