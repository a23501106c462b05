import { z } from "zod";
import { rapIdSchema } from "./ids.js";

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

const contentPartSchema = z.looseObject({ type: z.string() });

/** The `tool_result` a tool POSTs back to `callback_url`. */
export const toolResultSchema = z
  .looseObject({
    type: z.literal("tool_result"),
    group_id: rapIdSchema,
    id: rapIdSchema,
    call_id: rapIdSchema.optional(),
    text: z.string().optional(),
    content: z.array(contentPartSchema).optional(),
    display_as: z.string().optional(),
    subscription: z.boolean().optional(),
  })
  .refine((r) => r.text !== undefined || r.content !== undefined, { error: "a tool_result needs text or content" });
export type ToolResult = z.infer<typeof toolResultSchema>;

/** The text RAP's reference runtime puts in the conversation for an interrupted call. */
export const INTERRUPTED_TEXT = "Tool call interrupted by user";

/** The synthetic result a cancelled call gets, so the conversation never waits for the tool. */
export function interruptedResult(threadId: string, toolCallId: string, callId: string): ToolResult {
  return { type: "tool_result", group_id: threadId, id: toolCallId, call_id: callId, text: INTERRUPTED_TEXT };
}
