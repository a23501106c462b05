import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { cancellableMcpClient, jobOf, type McpEvent, scopeMcpHandlers } from "../../src/mcp/index.js";

/** What the 2.x server's `wait` tool saw: started, and the reason its job was cancelled with. */
export interface SecondLineTool {
  started: number;
  stopped: string[];
  events: McpEvent[];
}

/**
 * A real 2.x (2026-07-28) MCP server: `createMcpHandler` makes one McpServer per request, each scoped by
 * acp-cancel; its `wait` tool runs until its job is cancelled. Served on loopback over Streamable HTTP.
 */
export async function secondLineHttpServer(): Promise<{ url: URL; tool: SecondLineTool; close(): Promise<void> }> {
  const tool: SecondLineTool = { started: 0, stopped: [], events: [] };
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "second-line", version: "2.4.0" });
    scopeMcpHandlers(server, { onEvent: (event) => tool.events.push(event) });
    server.registerTool("wait", {}, async (ctx) => {
      const job = jobOf(ctx.mcpReq);
      tool.started++;
      await new Promise<void>((resolve) => job?.signal.addEventListener("abort", () => resolve(), { once: true }));
      tool.stopped.push(job?.reason ?? "none");
      return { content: [{ type: "text" as const, text: "stopped" }] };
    });
    server.registerTool("echo", {}, () => ({ content: [{ type: "text" as const, text: "echo" }] }));
    return server;
  });
  const http: HttpServer = createServer(getRequestListener((request) => handler.fetch(request)));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    tool,
    close: async () => {
      await handler.close?.();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A real 2.x client over Streamable HTTP, wrapped by our binding; `posted` lists the JSON-RPC methods it POSTed. */
export async function secondLineHttpClient(url: URL, events: McpEvent[]) {
  const posted: string[] = [];
  const tap = (input: string | URL | Request, init?: RequestInit) => {
    if (typeof init?.body === "string") posted.push(String((JSON.parse(init.body) as { method?: unknown }).method));
    return fetch(input, init);
  };
  const client = new Client({ name: "second-line-client", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  const mcp = cancellableMcpClient(client as never, { onEvent: (event) => events.push(event) });
  await mcp.connect(new StreamableHTTPClientTransport(url, { fetch: tap }) as never);
  return { client, mcp, posted };
}
