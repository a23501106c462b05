// Runtime side: dispatched tool calls as jobs, cancel notices fanned out to every tool server.
export { RapRuntime, type DeliveryEffect, type DispatchOptions, type InvokeOptions, type RapRuntimeEvent, type RapRuntimeOptions, type RapToolCallPayload, type ToolCall, type ToolCallOutcome } from "./runtime.js";
export {
  CancelFanout,
  type CancelFanoutOptions,
  type CancelNoticeOutcome,
  DEFAULT_NOTICE_CONCURRENCY,
  DEFAULT_NOTICE_TIMEOUT_MS,
  type NoticeResult,
  type ToolServer,
} from "./cancel-fanout.js";
export { cancelUrl } from "./base-url.js";
export { bearerSigner, combineSigners, headerSigner, type OutgoingRequest, type RequestSigner } from "./signer.js";
export { postInvocation, type PostInvocationOptions } from "./invocation.js";
export { INTERRUPTED_TEXT, type Invocation, interruptedResult, invocationSchema, type ToolResult, toolResultSchema } from "./messages.js";
// Tool-server side: the endpoint, its node:http adapter, the call registry and work helpers.
export { type CancelHandler, createCancelHandler, type RequestInfo } from "./cancel-endpoint.js";
export { createNodeCancelHandler, type NodeCancelHandler } from "./node-adapter.js";
export {
  type AuthRequest,
  type CancelEndpointOptions,
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_TIMEOUT_MS,
  type NoticeEvent,
  type NoticeRequest,
} from "./endpoint-core.js";
export { DEFAULT_RATE_LIMIT, type RateLimit } from "./rate-limiter.js";
export {
  CallRegistry,
  type CallRegistryOptions,
  DEFAULT_REMEMBER_MAX,
  DEFAULT_REMEMBER_MS,
  type NoticeEffect,
  type ServerCallPayload,
  type TrackedCall,
} from "./call-registry.js";
export { DEFAULT_KILL_GRACE_MS, groupRunning, processRunning, type RunOptions, type RunResult, runInProcessGroup, stopGroup } from "./process-group.js";
export { fetchForCall } from "./upstream-fetch.js";
export { assertRapId, type CancelNotice, cancelNoticeSchema, MAX_ID_LENGTH, rapIdSchema } from "./ids.js";
