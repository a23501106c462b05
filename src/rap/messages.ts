import { z } from "zod";
import { firstIssue } from "../wire/index.js";

// Ids are untrusted (RAP: "MUST validate them") and end up in logs, map keys and process names: bounded, no controls.
export const MAX_ID_LENGTH = 256;

// C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export const rapIdSchema = z
  .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
  .min(1, { error: "must not be empty" })
  .max(MAX_ID_LENGTH, { error: `must be at most ${MAX_ID_LENGTH} characters` })
  .refine((id) => !CONTROL.test(id), { error: "must not contain control characters" });

/** The body of `POST {base}/cancel_tool_call`: exactly these two fields. */
export const cancelNoticeSchema = z.strictObject(
  { thread_id: rapIdSchema, tool_call_id: rapIdSchema },
  { error: (issue) => (issue.code === "unrecognized_keys" ? "unknown field" : "must be a JSON object") },
);

/** The first problem a schema found, as one line naming the field ("tool_call_id: must be a string"). */
export function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue?.code === "unrecognized_keys") return `unknown field ${JSON.stringify(issue.keys[0] ?? "")}`;
  return issue !== undefined && issue.path.length > 0 ? firstIssue(error) : (issue?.message ?? "invalid");
}

/** Throws a TypeError naming the id when it is not a valid RAP id (for APIs called by code). */
export function assertRapId(name: string, id: unknown): asserts id is string {
  const parsed = rapIdSchema.safeParse(id);
  if (!parsed.success) throw new TypeError(`${name} ${parsed.error.issues[0]?.message ?? "is invalid"}`);
}

/** One map key for a (thread_id, tool_call_id) pair: valid ids hold no NUL, so pairs stay distinct. */
export function callKey(threadId: string, toolCallId: string): string {
  return `${threadId}\u0000${toolCallId}`;
}

/** The invocation POSTed to a toolset's `endpoint`, as the spec describes it (RAP publishes no JSON Schema). */
export const invocationSchema = z.object({
  operation: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  /** The tool call id: a cancel notice's `tool_call_id`. */
  id: rapIdSchema,
  call_id: rapIdSchema,
  callback_url: z.url(),
  /** The thread: a cancel notice's `thread_id`. */
  group_id: rapIdSchema,
  thread_ancestors: z.array(z.string()),
  user_id: z.string(),
});
export type Invocation = z.infer<typeof invocationSchema>;

/** The `tool_result` a tool POSTs back to `callback_url`. */
export const toolResultSchema = z
  .looseObject({
    type: z.literal("tool_result"),
    group_id: rapIdSchema,
    id: rapIdSchema,
    call_id: rapIdSchema.optional(),
    text: z.string().optional(),
    content: z.array(z.looseObject({ type: z.string() })).optional(),
    display_as: z.string().optional(),
    subscription: z.boolean().optional(),
  })
  .refine((r) => r.text !== undefined || r.content !== undefined, { error: "a tool_result needs text or content" });
export type ToolResult = z.infer<typeof toolResultSchema>;

/** The text RAP's reference runtime puts in the conversation for an interrupted call. */
export const INTERRUPTED_TEXT = "Tool call interrupted by user";

/** A result the runtime makes for a call; by default a cancelled call's, so the conversation never waits for the tool. */
export function syntheticResult(ids: Record<"threadId" | "toolCallId" | "callId", string>, text = INTERRUPTED_TEXT): ToolResult {
  return { type: "tool_result", group_id: ids.threadId, id: ids.toolCallId, call_id: ids.callId, text };
}
