/**
 * acp-cancel/mcp: MCP requests (and MCP tasks) as jobs of the shared tree. It binds both SDK lines,
 * `@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/client`/`server` 2.x, each an optional peer:
 * this module imports only types, so it loads nothing of either SDK itself.
 */
export {
  type CancellableMcpClient,
  type CancellableMcpClientOptions,
  cancellableMcpClient,
  type McpCallOptions,
} from "./cancellable-client.js";
export type { McpEvent } from "./events.js";
export { type McpHandlerScope, type McpHandlerScopeOptions, scopeMcpHandlers } from "./handler-scope.js";
// The task scope's types are reached through `scopeMcpTasks` (the API budget, test/packaging).
export { scopeMcpTasks } from "./task-scope.js";
// The seam, the same function for every binding: the job of the request a scoped handler handles.
export { jobOf } from "../core/index.js";
