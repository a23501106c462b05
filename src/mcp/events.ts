import type { CancelReason } from "../core/index.js";

/**
 * What the MCP binding did, for logs, traces and demos (only while `onEvent` is set): a request `sent`
 * under a job; its `cancel` (the SDK sent `notifications/cancelled`, not for `initialize`); how it
 * `settled` (`cancelled`: the SDK stopped waiting; `gave-up`: the grace passed first); and
 * `handler-cancelled`, a handler here told to stop (the peer's cancel, or the connection closed).
 */
export type McpOutcome = "answered" | "failed" | "cancelled" | "gave-up";

export type McpEvent =
  | { type: "sent"; method: string; label: string | undefined; at: number }
  | { type: "cancel"; method: string; label: string | undefined; reason: CancelReason; notified: boolean; at: number }
  | { type: "settled"; method: string; label: string | undefined; outcome: McpOutcome; at: number }
  | { type: "handler-cancelled"; method: string; reason: CancelReason; at: number };
