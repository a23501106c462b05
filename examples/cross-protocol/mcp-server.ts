/**
 * The demo's MCP server (@modelcontextprotocol/sdk over stdio). Its `search` tool is an MCP task
 * (2025-11-25): the call is answered with a task at once, and the task's work is a real child
 * process that searches until it is stopped. `scopeMcpTasks` makes `tasks/cancel` abort the
 * work's signal, which kills the process; the task stays `cancelled`.
 */
import { spawn } from "node:child_process";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { scopeMcpHandlers, scopeMcpTasks } from "../../src/mcp/index.js";
import { traceThisProcess } from "../otel/trace-process.js";
import { note, report } from "./events.js";

// When the demo traces, this process's jobs are spans of the service "mcp-server".
const flush = await traceThisProcess("mcp-server");

const tasks = scopeMcpTasks(new InMemoryTaskStore());
const server = new McpServer(
  { name: "search-server", version: "1.0.0" },
  { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore: tasks.store },
);
scopeMcpHandlers(server);
tasks.closeWith(server);

/** The task's work: a child process that "searches" until the task's signal kills it. */
async function search(taskId: string, query: string, signal: AbortSignal): Promise<string> {
  const task = taskId.slice(0, 8); // enough to tell tasks apart in the printout
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 20)", query], { signal, stdio: "ignore" });
  child.on("error", () => {}); // the abort's AbortError; the exit below says how it ended
  report(note("MCP", "mcp-server", `task ${task} runs in child process ${child.pid}`));
  const killedBy = await new Promise<string>((resolve) => child.once("exit", (code, by) => resolve(by ?? `exit ${code}`)));
  report(note("MCP", "mcp-server", `task ${task} child process ${child.pid} ended ${killedBy}`));
  return "searched";
}

server.experimental.tasks.registerToolTask(
  "search",
  { inputSchema: { query: z.string() }, execution: { taskSupport: "required" } },
  {
    createTask: async ({ query }, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60_000 });
      tasks.run(task.taskId, extra, async (signal) => ({ content: [{ type: "text", text: await search(task.taskId, query, signal) }] }));
      return { task };
    },
    getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
  },
);

await server.connect(new StdioServerTransport());
process.stdin.on("end", () => void flush().finally(() => process.exit(0)));
