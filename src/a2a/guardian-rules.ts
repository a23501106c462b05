import { z } from "zod";

/**
 * The reference guardian's rules file: the first rule whose conditions all match decides; with
 * none matching, `default` decides. A rule with `rate` matches only once more than `max` of the
 * cancels matching its other conditions came from the same agent within `windowMs`.
 */
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

export const GuardianRulesSchema = z.strictObject({
  default: z.enum(["allow", "deny"]),
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token: z.string().min(1).optional(),
  rules: z.array(RuleSchema).max(1000).default([]),
});

export type GuardianRules = z.input<typeof GuardianRulesSchema>;
export type GuardianRule = z.infer<typeof RuleSchema>;

/** A rules file that cannot be used, with a message naming what is wrong. */
export class RulesError extends Error {
  override readonly name = "RulesError";
}

/** Parses and checks rules (from a file's text or an object); throws RulesError naming the problem. */
export function parseGuardianRules(input: string | unknown): z.infer<typeof GuardianRulesSchema> {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch (error) {
      throw new RulesError(`the rules are not JSON: ${(error as Error).message}`);
    }
  }
  const parsed = GuardianRulesSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "the rules";
    throw new RulesError(`invalid rules: ${where}: ${issue?.message ?? "invalid"}`);
  }
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

/** What the rules decide for one cancel. */
export interface RuleVerdict {
  decision: "allow" | "deny";
  /** Index of the deciding rule, or -1 for the default. */
  rule: number;
  message: string;
  reasonCode: string[];
}

export interface CancelFacts {
  from: string;
  to: string;
  taskId: string;
}

/** Evaluates rules, keeping the per-rule, per-agent counts the `rate` conditions need. */
export class RuleBook {
  private readonly patterns: (RegExp | undefined)[];
  /** Rule index → agent name → times of recent matching cancels. */
  private readonly seen = new Map<number, Map<string, number[]>>();

  constructor(readonly rules: z.infer<typeof GuardianRulesSchema>) {
    this.patterns = rules.rules.map((rule) => (rule.taskId === undefined ? undefined : new RegExp(rule.taskId, "u")));
  }

  decide(facts: CancelFacts, now = Date.now()): RuleVerdict {
    for (const [index, rule] of this.rules.rules.entries()) {
      if (!nameMatches(rule.from, facts.from) || !nameMatches(rule.to, facts.to)) continue;
      if (this.patterns[index]?.test(facts.taskId) === false) continue;
      if (rule.rate !== undefined && !this.overRate(index, rule.rate, facts.from, now)) continue;
      const why = rule.rate !== undefined ? "rate" : "rule";
      return {
        decision: rule.decision,
        rule: index,
        message: rule.message ?? `${rule.decision} by ${why} ${index}`,
        reasonCode: rule.reasonCode ?? [`rule-${index}`],
      };
    }
    const decision = this.rules.default;
    return { decision, rule: -1, message: `${decision} by default`, reasonCode: ["default"] };
  }

  private overRate(index: number, rate: { max: number; windowMs: number }, agent: string, now: number): boolean {
    let perAgent = this.seen.get(index);
    if (perAgent === undefined) this.seen.set(index, (perAgent = new Map()));
    const times = (perAgent.get(agent) ?? []).filter((t) => t > now - rate.windowMs);
    times.push(now);
    perAgent.set(agent, times);
    if (perAgent.size > MAX_TRACKED_AGENTS) forgetIdle(perAgent, now - rate.windowMs);
    return times.length > rate.max;
  }
}

/** Above this many agents per rate rule, agents with no cancel inside the window are forgotten. */
const MAX_TRACKED_AGENTS = 10_000;

function forgetIdle(perAgent: Map<string, number[]>, since: number): void {
  for (const [agent, times] of perAgent) if (!times.some((t) => t > since)) perAgent.delete(agent);
}

function nameMatches(condition: string | string[] | undefined, name: string): boolean {
  if (condition === undefined) return true;
  return typeof condition === "string" ? condition === name : condition.includes(name);
}
