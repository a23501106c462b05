/**
 * zod schemas for everything the agent side receives from an app: every field is untrusted.
 * (The page checks what it receives by hand, to stay free of dependencies.)
 */
import { z } from "zod";
import { LIMITS, MESSAGE_TYPES } from "./app/protocol.js";

const Id = z.string().min(1).max(LIMITS.maxIdLength);
const Text = z.string().max(LIMITS.maxTextLength);

export const EnvelopeSchema = z.object({
  type: z.enum(MESSAGE_TYPES),
  id: Id.optional(),
  timestamp: z.number().finite(),
  // Checked as a plain object, not copied key by key: each kind of payload has its own schema below.
  payload: z.custom<Record<string, unknown>>(
    (value) => typeof value === "object" && value !== null && !Array.isArray(value),
    "expected an object",
  ),
});

export const AbpErrorSchema = z.looseObject({
  code: Text,
  message: Text,
  retryable: z.boolean().optional(),
});

export const InitializeResultSchema = z.object({
  sessionId: Id,
  protocolVersion: Text,
  app: z.object({ id: Text, name: Text, version: Text }),
  capabilities: z.array(z.object({ name: Id, available: z.boolean() })),
  features: z.record(z.string(), z.unknown()),
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

export const CancelResultSchema = z.object({
  callId: Id,
  cancelled: z.boolean(),
  reason: Text.optional(),
  error: AbpErrorSchema.optional(),
});

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

/** One line naming the first problem zod found, with its path. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  const path = issue.path.length > 0 ? issue.path.join(".") : "(root)";
  return `${path}: ${issue.message}`;
}
