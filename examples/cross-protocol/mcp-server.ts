/**
 * The demo's MCP server (@modelcontextprotocol/sdk over stdio). Its `search` tool works until
 * it is cancelled; `scopeMcpHandlers` makes each handler a job, so `jobOf(extra)` could be
 * handed on to anything the tool calls in turn.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { jobOf, scopeMcpHandlers } from "../../src/mcp/index.js";
import { traceThisProcess } from "../otel/trace-process.js";
import { note, report } from "./events.js";

// When the demo traces, this process's jobs are spans of the service "mcp-server".
const flush = await traceThisProcess("mcp-server");

const server = new McpServer({ name: "search-server", version: "1.0.0" });
scopeMcpHandlers(server);

server.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }, extra) => {
  report(note("MCP", "mcp-server", `tool search started (${query})`));
  let pages = 0;
  // "Searches" a page every 20 ms until its signal aborts.
  while (!extra.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    pages++;
  }
  report(note("MCP", "mcp-server", `tool search stopped after ${pages} pages: handler signal aborted (job ${jobOf(extra)?.state ?? "?"})`));
  return { content: [{ type: "text", text: `${pages} pages` }] };
});

await server.connect(new StdioServerTransport());
process.stdin.on("end", () => void flush().finally(() => process.exit(0)));
