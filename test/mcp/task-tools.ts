import { spawn } from "node:child_process";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { type McpEvent, scopeMcpHandlers, scopeMcpTasks } from "../../src/mcp/index.js";

type McpTaskScope = ReturnType<typeof scopeMcpTasks>;

/** What the task tools report: a task's child process started (its pid), its work ended, how. */
export type TaskReport = (line: string) => void;

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/**
 * A real SDK 1.x McpServer with MCP tasks, scoped by acp-cancel: `build` runs a real child process (a
 * node process that never exits by itself) as its work; `stubborn` ignores its signal for `ms`; `quick`
 * ends after `ms`. Reports `task <id> child <pid>`, `task <id> ended <how>`.
 */
export function taskServer(report: TaskReport, onEvent?: (event: McpEvent) => void): { server: McpServer; tasks: McpTaskScope } {
  const tasks = scopeMcpTasks(new InMemoryTaskStore(), { onEvent });
  const server = new McpServer(
    { name: "task-server", version: "1.0.0" },
    { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {}, list: {} } }, taskStore: tasks.store },
  );
  scopeMcpHandlers(server, { onEvent });
  tasks.closeWith(server);
  const register = (name: string, work: (taskId: string, ms: number, signal: AbortSignal) => Promise<string>) =>
    server.experimental.tasks.registerToolTask(
      name,
      { inputSchema: { ms: z.number().optional() }, execution: { taskSupport: "optional" } },
      {
        createTask: async ({ ms }, extra) => {
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 });
          tasks.run(task.taskId, extra, async (signal) => text(await work(task.taskId, ms ?? 60_000, signal)));
          return { task };
        },
        getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
      },
    );
  register("build", async (taskId, _ms, signal) => {
    // The work is a real process: the task's signal kills it (SIGTERM).
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { signal, stdio: "ignore" });
    child.on("error", () => {});
    report(`task ${taskId} child ${child.pid}`);
    // Not events.once: the abort also emits "error" (an AbortError), which would reject it before the exit.
    const [code, killedBy] = await new Promise<[number | null, string | null]>((resolve) =>
      child.once("exit", (...ended) => resolve(ended)),
    );
    report(`task ${taskId} ended ${killedBy ?? `exit ${code}`}`);
    return "built";
  });
  register("stubborn", async (taskId, ms) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    report(`task ${taskId} ended returned`);
    return "stubborn result";
  });
  register("quick", async (taskId, ms) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    report(`task ${taskId} ended finished`);
    return "quick result";
  });
  server.registerTool("task_in_flight", {}, () => text(String(tasks.inFlight)));
  return { server, tasks };
}
