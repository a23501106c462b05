/** acp-cancel/rap: RAP tool-call cancellation that stops the work (docs/rap.md). */
// Runtime side: dispatched tool calls as jobs, cancel notices fanned out to every tool server.
export {
  type InvokeOptions,
  RapRuntime,
  type RapRuntimeEvent,
  type RapRuntimeOptions,
  type ToolCall,
  type ToolCallOutcome,
} from "./runtime.js";
export { bearerSigner, combineSigners, headerSigner, type RequestSigner } from "./signer.js";
// Tool-server side: the endpoint, its node:http adapter, the call registry and work helpers.
export { type CancelHandler, createCancelHandler } from "./cancel-endpoint.js";
export { createNodeCancelHandler, type NodeCancelHandler } from "./node-adapter.js";
export type { CancelEndpointOptions, NoticeEvent } from "./endpoint-core.js";
export { CallRegistry, type CallRegistryOptions, type TrackedCall } from "./call-registry.js";
export { groupRunning, type RunOptions, type RunResult, runInProcessGroup } from "./process-group.js";
export { fetchForCall } from "./upstream-fetch.js";
export { type Invocation, invocationSchema, type ToolResult } from "./messages.js";
