// ACP pieces both the engine (acp/) and the vscode-jsonrpc binding (jsonrpc/) read: below both.

/** The `sessionId` of ACP params, when there is one. */
export function sessionIdOf(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const sessionId = (params as { sessionId?: unknown }).sessionId;
  return typeof sessionId === "string" ? sessionId : undefined;
}

/** The result ACP requires for a permission request pending when its session is cancelled. */
export const PERMISSION_CANCELLED = Object.freeze({ outcome: Object.freeze({ outcome: "cancelled" as const }) });
