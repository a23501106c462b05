import type { CancelReason } from "../core/index.js";

// ACP pieces both the engine (acp/) and the vscode-jsonrpc binding (jsonrpc/) read: below both.

/** The `sessionId` of ACP params, when there is one. */
export function sessionIdOf(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const sessionId = (params as { sessionId?: unknown }).sessionId;
  return typeof sessionId === "string" ? sessionId : undefined;
}

/** Whether `session/update` params announce a tool call (its first update, `tool_call`). */
export function isToolCallUpdate(params: unknown): boolean {
  return (params as { update?: { sessionUpdate?: unknown } } | undefined)?.update?.sessionUpdate === "tool_call";
}

/** The result ACP requires for a permission request pending when its session is cancelled. */
export const PERMISSION_CANCELLED = Object.freeze({ outcome: Object.freeze({ outcome: "cancelled" as const }) });

/** The `data` of every -32800 this library produces, whichever binding produced it. */
export interface CancelledErrorData {
  reason: CancelReason;
  detail?: string;
  /** The handler's own error, when it answered a cancelled request with another error. */
  originalError?: { code: number; message: string; data?: unknown };
}

export function cancelledErrorData(
  reason: CancelReason,
  detail?: string,
  originalError?: CancelledErrorData["originalError"],
): CancelledErrorData {
  return { reason, ...(detail === undefined ? {} : { detail }), ...(originalError === undefined ? {} : { originalError }) };
}
