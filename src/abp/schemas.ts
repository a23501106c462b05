/**
 * zod schemas for everything the agent side receives from an app: every field is untrusted.
 * (The page checks what it receives by hand, to stay free of dependencies.)
 */
import { z } from "zod";
import { LIMITS, MESSAGE_TYPES, type RequestType } from "./app/protocol.js";
import { isId, isObject } from "./app/validate.js";

const Id = z.string().min(1).max(LIMITS.maxIdLength);
const Text = z.string().max(LIMITS.maxTextLength);

export const EnvelopeSchema = z.object({
  type: z.enum(MESSAGE_TYPES),
  id: Id.optional(),
  timestamp: z.number().finite(),
  // Checked as a plain object, not copied key by key: each kind of payload has its own schema below.
  payload: z.custom<Record<string, unknown>>(isObject, "expected an object"),
});

const AbpErrorSchema = z.looseObject({
  code: Text,
  message: Text,
  retryable: z.boolean().optional(),
});

export const CallResultSchema = z
  .object({
    success: z.boolean(),
    data: z.unknown().optional(),
    error: AbpErrorSchema.optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    cancelled: z.boolean().optional(),
  })
  .refine((r) => !(r.cancelled === true && (r.success || r.data !== undefined)), {
    message: "a cancelled call must answer success:false with no data",
  });

/** The answer to each request type. */
export const RESULT_SCHEMAS: Record<RequestType, z.ZodType> = {
  "initialize": z.object({
    sessionId: Id,
    protocolVersion: Text,
    app: z.object({ id: Text, name: Text, version: Text }),
    capabilities: z.array(z.object({ name: Id, available: z.boolean() })),
    features: z.record(z.string(), z.unknown()),
  }),
  "capabilities/call": CallResultSchema,
  "capabilities/cancel": z.object({
    callId: Id,
    cancelled: z.boolean(),
    reason: Text.optional(),
    error: AbpErrorSchema.optional(),
  }),
};

export const ProgressSchema = z.object({
  progressToken: z.union([Id, z.number().finite()]),
  progress: z.number().finite(),
  total: z.number().finite().optional(),
  message: Text.optional(),
});

export const NotificationSchema = z.object({
  event: Text,
  error: AbpErrorSchema.optional(),
  inReplyTo: Id.optional(),
  data: z.unknown().optional(),
});

const MESSAGE_TYPE_SET: ReadonlySet<string> = new Set(MESSAGE_TYPES);
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(["type", "id", "timestamp", "payload"]);

/**
 * The common case of `EnvelopeSchema`, checked by hand without a copy: true only when zod would
 * accept `value` and give back the same fields (no others to strip). Anything else goes to zod,
 * which says what is wrong.
 */
export function isExactEnvelope(value: unknown): value is z.infer<typeof EnvelopeSchema> {
  if (!isObject(value)) return false;
  for (const key in value) if (!ENVELOPE_KEYS.has(key)) return false;
  const { type, id, timestamp } = value;
  return typeof type === "string" && MESSAGE_TYPE_SET.has(type) &&
    (id === undefined || isId(id)) &&
    typeof timestamp === "number" && Number.isFinite(timestamp) &&
    isObject(value.payload);
}

/**
 * The common case of `CallResultSchema` (`success`, and maybe `data` and `cancelled`), by hand:
 * true only when zod would accept `value` as it is. Errors and metadata go to zod.
 */
export function isPlainCallResult(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key in value) if (key !== "success" && key !== "data" && key !== "cancelled") return false;
  const { success, cancelled } = value;
  if (typeof success !== "boolean" || (cancelled !== undefined && typeof cancelled !== "boolean")) return false;
  return !(cancelled === true && (success || value.data !== undefined));
}

/** One line naming the first problem zod found, with its path. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  const path = issue.path.length > 0 ? issue.path.join(".") : "(root)";
  return `${path}: ${issue.message}`;
}
