import type { z } from "zod";
import { type AosResult, AosResultSchema, GuardianResponseSchema } from "./aos.js";

export type GuardianResponse = z.infer<typeof GuardianResponseSchema>;

// On every guarded cancel's path, the usual answer is recognised by hand (the schemas' unions cost more than
// the rest of its handling); anything else goes through the schema, which alone decides what is accepted.

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) => value === undefined || typeof value === "string";
const isCode = (value: unknown) => typeof value === "string" || (typeof value === "number" && Number.isFinite(value));

/** A JSON-RPC 2.0 answer as GuardianResponseSchema reads it, or undefined when it is not one. */
export function guardianResponse(json: unknown): GuardianResponse | undefined {
  if (isObject(json) && json.jsonrpc === "2.0" && typeof json.id === "string" && !("error" in json) && "result" in json) {
    return { jsonrpc: "2.0", id: json.id, result: json.result };
  }
  const parsed = GuardianResponseSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** An AOS decision as AosResultSchema reads it, or undefined when it is not one. */
export function aosResult(value: unknown): AosResult | undefined {
  const { decision, message, reasoning, reasonCode }: Record<string, unknown> = isObject(value) ? value : {};
  const codes = reasonCode === undefined || (Array.isArray(reasonCode) && reasonCode.every(isCode));
  // Only the schema's fields are read from it; `data` and `modifiedRequest` are any value.
  if (typeof decision === "string" && decision !== "" && isOptionalString(message) && isOptionalString(reasoning) && codes) {
    return value as AosResult;
  }
  const parsed = AosResultSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
