/**
 * An MCP server that breaks the tasks spec in one chosen way, as plain JSON-RPC (no SDK), for the bad-input
 * tests: `no-task-id` answers a task without a taskId; `bad-status` reports a status outside the spec's set;
 * `never-terminal` answers tasks/cancel with `working` and stays so; `terminal` says the task already ended.
 * Any call without `task` is answered `echo`, so a test can see the connection go on.
 */
export type RogueMode = "no-task-id" | "bad-status" | "never-terminal" | "terminal";

type Message = { id?: string | number; method?: string; params?: { task?: unknown; taskId?: string } };

const TASK_ID = "rogue-task-1";

/** The answers to one incoming message (none for a notification or a wait that never ends). */
export function rogueAnswers(mode: RogueMode, message: Message): unknown[] {
  const { id, method, params } = message;
  if (id === undefined) return [];
  const result = (value: unknown) => [{ jsonrpc: "2.0", id, result: value }];
  const task = (status: string) => ({ taskId: TASK_ID, status, createdAt: "2026-11-28T00:00:00Z", ttl: null });
  switch (method) {
    case "initialize":
      return result({
        protocolVersion: "2025-11-25",
        capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
        serverInfo: { name: `rogue-${mode}`, version: "1.0.0" },
      });
    case "tools/call":
      if (params?.task === undefined) return result({ content: [{ type: "text", text: "echo" }] });
      return result({ task: mode === "no-task-id" ? { status: "working" } : task("working") });
    case "tasks/result":
      return [];
    case "tasks/get":
      return result(task(mode === "bad-status" ? "paused" : "working"));
    case "tasks/cancel":
      if (mode === "terminal") {
        return [{ jsonrpc: "2.0", id, error: { code: -32602, message: "Cannot cancel task in terminal status: completed" } }];
      }
      return result(task(mode === "bad-status" ? "paused" : "working"));
    default:
      return [{ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${String(method)}` } }];
  }
}
