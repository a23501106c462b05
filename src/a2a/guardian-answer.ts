import type { z } from "zod";
import { type AosResult, AosResultSchema, GuardianResponseSchema } from "./aos.js";

export type GuardianResponse = z.infer<typeof GuardianResponseSchema>;

/*
 * Reading a guardian's answer sits on every guarded cancel's path. The usual answer (a JSON-RPC
 * result with an allow or deny) is recognised by hand, because the schemas' unions cost more
 * than the rest of the answer's handling. Whatever the hand check does not recognise goes
 * through the schema, so what is accepted, and how it is read, is exactly what the schema says.
 */

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isOptionalString = (value: unknown) => value === undefined || typeof value === "string";
const isCode = (value: unknown) => typeof value === "string" || (typeof value === "number" && Number.isFinite(value));

/** A JSON-RPC 2.0 answer as GuardianResponseSchema reads it, or undefined when it is not one. */
export function guardianResponse(json: unknown): GuardianResponse | undefined {
  // A string id and a result without an error: the schema's second branch, taken as it is.
  if (isObject(json) && json.jsonrpc === "2.0" && typeof json.id === "string" && !("error" in json) && "result" in json) {
    return { jsonrpc: "2.0", id: json.id, result: json.result };
  }
  const parsed = GuardianResponseSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** An AOS decision as AosResultSchema reads it, or undefined when it is not one. */
export function aosResult(value: unknown): AosResult | undefined {
  if (
    isObject(value) &&
    typeof value.decision === "string" &&
    value.decision !== "" &&
    isOptionalString(value.message) &&
    isOptionalString(value.reasoning) &&
    (value.reasonCode === undefined || (Array.isArray(value.reasonCode) && value.reasonCode.every(isCode)))
  ) {
    // Only the schema's fields are read from it; `data` and `modifiedRequest` are any value.
    return value as AosResult;
  }
  const parsed = AosResultSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
