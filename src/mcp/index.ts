/**
 * acp-cancel/mcp: MCP requests as jobs of the shared tree. `@modelcontextprotocol/sdk` is an
 * optional peer: this module imports only its types, so it loads nothing of the SDK itself.
 */
export {
  type CancellableMcpClient,
  type CancellableMcpClientOptions,
  cancellableMcpClient,
  type McpCallOptions,
} from "./cancellable-client.js";
export type { McpEvent } from "./events.js";
export { type McpHandlerScope, type McpHandlerScopeOptions, scopeMcpHandlers } from "./handler-scope.js";
// The seam, the same function for every binding: the job of the request a scoped handler handles.
export { jobOf } from "../core/index.js";
