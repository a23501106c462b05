/**
 * acp-cancel/mcp: MCP requests as jobs of the shared tree. `@modelcontextprotocol/sdk` is an
 * optional peer: this module imports only its types, so it loads nothing of the SDK itself.
 */
export {
  type CancellableMcpClient,
  type CancellableMcpClientOptions,
  cancellableMcpClient,
  type McpCallOptions,
  type McpClientLike,
} from "./cancellable-client.js";
export type { McpEvent } from "./events.js";
export { type McpHandlerHost, type McpHandlerScope, type McpHandlerScopeOptions, scopeMcpHandlers } from "./handler-scope.js";
export { McpCall, McpHandling } from "./mcp-call.js";
// The seam, the same function for every binding: the job of the request a scoped handler handles.
export { jobOf } from "../core/index.js";
