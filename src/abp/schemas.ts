/**
 * zod schemas for the untrusted payloads the agent side receives (the envelope itself is checked by hand, as the page
 * does: validate.ts). The answers' types come from here for both sides (the page imports types only).
 */
import { z } from "zod";
import { LIMITS, type RequestType } from "./app/protocol.js";
import { isObject } from "./app/validate.js";

const Id = z.string().min(1).max(LIMITS.maxIdLength);
const Text = z.string().max(LIMITS.maxTextLength);

const AbpErrorSchema = z.looseObject({
  code: Text,
  message: Text,
  retryable: z.boolean().optional(),
});
export type AbpError = z.infer<typeof AbpErrorSchema>;

/** `capabilities/call-result` payload. A cancelled call carries no data. */
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
export type CallResult = z.infer<typeof CallResultSchema>;

const InitializeResultSchema = z.object({
  sessionId: Id,
  protocolVersion: Text,
  app: z.object({ id: Text, name: Text, version: Text }),
  capabilities: z.array(z.object({ name: Id, available: z.boolean() })),
  features: z.record(z.string(), z.unknown()),
});
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

/** `capabilities/cancel-result` payload; without a session `{callId, cancelled: false, error: {code: "NOT_INITIALIZED", …}}`. */
const CancelResultSchema = z.object({
  callId: Id,
  cancelled: z.boolean(),
  reason: Text.optional(),
  error: AbpErrorSchema.optional(),
});
export type CancelResult = z.infer<typeof CancelResultSchema>;

/** The answer to each request type. */
export const RESULT_SCHEMAS: Record<RequestType, z.ZodType> = {
  "initialize": InitializeResultSchema,
  "capabilities/call": CallResultSchema,
  "capabilities/cancel": CancelResultSchema,
};

export const ProgressSchema = z.object({
  progressToken: z.union([Id, z.number().finite()]),
  progress: z.number().finite(),
  total: z.number().finite().optional(),
  message: Text.optional(),
});
export type ProgressPayload = z.infer<typeof ProgressSchema>;

/**
 * `notification` payload: `{event: "error", error, inReplyTo?}` answers bad input (with its envelope id when it could
 * be read); `{event: "closing"}` tells a postMessage agent that the app's page is going away.
 */
export const NotificationSchema = z.object({
  event: Text,
  error: AbpErrorSchema.optional(),
  inReplyTo: Id.optional(),
  data: z.unknown().optional(),
});
export type NotificationPayload = z.infer<typeof NotificationSchema>;

/** The common case of `CallResultSchema` by hand (measured, docs/decisions.md): true only when zod would accept it as it is. */
export function isPlainCallResult(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key in value) if (key !== "success" && key !== "data" && key !== "cancelled") return false;
  const { success, cancelled } = value;
  if (typeof success !== "boolean" || (cancelled !== undefined && typeof cancelled !== "boolean")) return false;
  return !(cancelled === true && (success || value.data !== undefined));
}
