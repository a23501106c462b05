/** MCP task shapes (spec 2025-11-25, `tasks`), checked by hand: this binding loads nothing of the SDK. */

/** Every status the spec allows; the last three are terminal. */
const TASK_STATUSES = ["working", "input_required", "completed", "failed", "cancelled"] as const;
export type McpTaskStatus = (typeof TASK_STATUSES)[number];

function isTaskStatus(value: unknown): value is McpTaskStatus {
  return typeof value === "string" && (TASK_STATUSES as readonly string[]).includes(value);
}

export function isTerminalStatus(status: McpTaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** What a `tools/call` answer is: a plain result, a task handle, or a task field that is not one. */
type TaskAnswer = { kind: "result" } | { kind: "task"; taskId: string } | { kind: "bad"; problem: string };

/** Reads a request's answer: `{ task: { taskId, status, ... } }` is a task (CreateTaskResult). */
export function readTaskAnswer(answer: unknown): TaskAnswer {
  if (typeof answer !== "object" || answer === null || !("task" in answer)) return { kind: "result" };
  const task = (answer as { task: unknown }).task;
  if (typeof task !== "object" || task === null) return { kind: "bad", problem: "the answer's task is not an object" };
  const { taskId, status } = task as Record<string, unknown>;
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > 512) {
    return { kind: "bad", problem: "the answer's task has no valid taskId (a non-empty string)" };
  }
  if (!isTaskStatus(status)) return { kind: "bad", problem: `task ${taskId} has status ${JSON.stringify(status)}, outside the spec's set` };
  return { kind: "task", taskId };
}

/** The status in a `tasks/get` or `tasks/cancel` answer; undefined (with why) when it is not one of the spec's. */
export function readTaskStatus(answer: unknown): { status: McpTaskStatus } | { problem: string } {
  const status = typeof answer === "object" && answer !== null ? (answer as { status?: unknown }).status : undefined;
  return isTaskStatus(status) ? { status } : { problem: `task status ${JSON.stringify(status)} is outside the spec's set` };
}

/** MCP's invalid-params code, which `tasks/cancel` answers for a task already terminal (or not found). */
const INVALID_PARAMS = -32602;

/** How a failed `tasks/cancel` ended: the task was already terminal, was unknown to the server, or something else. */
export function classifyCancelError(error: unknown): "already-terminal" | "unknown-task" | "failed" {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== INVALID_PARAMS) return "failed";
  const text = typeof message === "string" ? message : "";
  if (/terminal/i.test(text)) return "already-terminal";
  return /not found/i.test(text) ? "unknown-task" : "failed";
}
