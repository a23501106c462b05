import type { CancelReason } from "../core/index.js";
import type { McpTaskStatus } from "./task-shapes.js";

/**
 * What the MCP binding did, for logs, traces and demos (only while `onEvent` is set): a request `sent`
 * under a job; its `cancel` (the SDK sent `notifications/cancelled`, or closed the request's stream; not for
 * `initialize`); how it `settled` (`cancelled`: the SDK stopped waiting or the task ended; `gave-up`: the grace
 * passed first); and `handler-cancelled`, a handler here told to stop (the peer's cancel, or the connection closed).
 *
 * Tasks (MCP 2025-11-25): `task` when the server answered with one; `task-cancel` with how `tasks/cancel` ended;
 * `task-running` when a cancelled task was still not terminal at the grace's end (the server runs on);
 * `bad-task` for an answer that breaks the spec (no valid `taskId`, a status outside the set).
 * Server side: `task-cancelled` when a task's work was told to stop, `task-result-dropped` for work that
 * returned after its task was cancelled (the task stays `cancelled`).
 */
export type McpOutcome = "answered" | "failed" | "cancelled" | "gave-up";

/** How a `tasks/cancel` this binding sent ended. */
export type McpTaskCancelAnswer = McpTaskStatus | "already-terminal" | "unknown-task" | "failed";

export type McpEvent =
  | { type: "sent"; method: string; label: string | undefined; at: number }
  | { type: "cancel"; method: string; label: string | undefined; reason: CancelReason; notified: boolean; at: number }
  | { type: "settled"; method: string; label: string | undefined; outcome: McpOutcome; at: number }
  | { type: "handler-cancelled"; method: string; reason: CancelReason; at: number }
  | { type: "task"; method: string; label: string | undefined; taskId: string; at: number }
  | { type: "task-cancel"; method: string; label: string | undefined; taskId: string; answer: McpTaskCancelAnswer; at: number }
  | { type: "task-running"; method: string; label: string | undefined; taskId: string; status: string; at: number }
  | { type: "bad-task"; method: string; label: string | undefined; problem: string; at: number }
  | { type: "task-cancelled"; method: string; taskId: string; reason: CancelReason; at: number }
  | { type: "task-result-dropped"; method: string; taskId: string; at: number };

/** The scopes' options: `onEvent` sees what they did. */
export type McpEventOptions = { onEvent?: ((event: McpEvent) => void) | undefined };
