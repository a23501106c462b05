import type { CancelReason } from "../core/index.js";

/**
 * What the MCP binding did, for logs, traces and demos; only produced when `onEvent` is set.
 * - `sent`: a request left under a job.
 * - `cancel`: its job was cancelled; the SDK sent `notifications/cancelled` (not for `initialize`).
 * - `settled`: the request is over for this side: `answered`, `failed`, `cancelled` (the SDK
 *   stopped waiting when it sent the cancel) or `gave-up` (the grace passed first).
 * - `handler-cancelled`: a handler here was told to stop (the peer's cancel, or the connection closed).
 */
export type McpEvent =
  | { type: "sent"; method: string; label: string | undefined; at: number }
  | { type: "cancel"; method: string; label: string | undefined; reason: CancelReason; notified: boolean; at: number }
  | {
    type: "settled";
    method: string;
    label: string | undefined;
    outcome: "answered" | "failed" | "cancelled" | "gave-up";
    at: number;
  }
  | { type: "handler-cancelled"; method: string; reason: CancelReason; at: number };
