import { z } from "zod";

// The AOS shapes of its `tasks/cancel` hooks, from its examples (its field tables contradict them: docs/a2a.md).

/** `result` of an AOSSuccessResponse. `decision` is kept a string so an unknown one can be reported. */
export const AosResultSchema = z.object({
  decision: z.string().min(1),
  message: z.string().optional(),
  reasoning: z.string().optional(),
  reasonCode: z.array(z.union([z.string(), z.number()])).optional(),
  data: z.unknown().optional(),
  modifiedRequest: z.unknown().optional(),
});
export type AosResult = z.infer<typeof AosResultSchema>;

export const PingResultSchema = z.object({ status: z.string(), version: z.string(), timestamp: z.string() });
export type PingResult = z.infer<typeof PingResultSchema>;

/** An agent as AOS describes it in `context.from/to.agent`: its card, or at least a name. */
const AgentSchema = z.looseObject({
  name: z.string().min(1).max(1024),
  url: z.string().max(4096).optional(),
  version: z.string().max(256).optional(),
});

const PartySchema = z.object({ agent: AgentSchema, role: z.enum(["client", "server"]) });

/** What a guardian accepts as `params` of `tasks/cancel`: every field untrusted, sizes bounded. */
export const AosGuardParamsSchema = z.object({
  payload: z.object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string().max(1024), z.number()]),
    method: z.enum(["tasks/cancel", "CancelTask"]),
    params: z.looseObject({
      id: z.string().min(1).max(1024),
      metadata: z.record(z.string(), z.unknown()).optional(),
      tenant: z.string().max(1024).optional(),
    }),
  }),
  reasoning: z.string().max(16_384).optional(),
  context: z.object({ from: PartySchema, to: PartySchema }),
});

export type AosGuardParams = z.infer<typeof AosGuardParamsSchema>;
export type A2aCancelMessage = AosGuardParams["payload"];
export type AosAgent = z.infer<typeof AgentSchema>;

export type AosGuardRequest = { jsonrpc: "2.0"; id: string; method: "tasks/cancel"; params: AosGuardParams };

// The usual result is recognised by hand, anything else by the schema (docs/decisions.md, "Kept: the guardian's usual answer").

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) => value === undefined || typeof value === "string";
const isCode = (value: unknown) => typeof value === "string" || (typeof value === "number" && Number.isFinite(value));

/** An AOS decision as AosResultSchema reads it, or undefined when it is not one. */
export function aosResult(value: unknown): AosResult | undefined {
  const { decision, message, reasoning, reasonCode }: Record<string, unknown> = isObject(value) ? value : {};
  const codes = reasonCode === undefined || (Array.isArray(reasonCode) && reasonCode.every(isCode));
  if (typeof decision === "string" && decision !== "" && isOptionalString(message) && isOptionalString(reasoning) && codes) {
    return value as AosResult;
  }
  const parsed = AosResultSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
