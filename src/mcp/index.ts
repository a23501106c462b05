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
// The options types (`{ onEvent? }`) are reached through the functions (the API budget, test/packaging).
export { type McpHandlerScope, scopeMcpHandlers } from "./handler-scope.js";
export { scopeMcpTasks } from "./task-scope.js";
// The seam, the same function for every binding: the job of the request a scoped handler handles.
export { jobOf } from "../core/index.js";
