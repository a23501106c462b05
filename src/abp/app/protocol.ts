/**
 * The ABP wire: envelope, message types, payload shapes and limits. Shared by the agent side
 * (Node or browser) and the app side (the page). Plain ESM with no imports, so the page can load
 * it as it is.
 */

export const PROTOCOL_VERSION = "0.1";

/** Requests (answered by `<type>-result` with the same envelope id) and one-way messages. */
export const MESSAGE_TYPES = [
  "initialize",
  "initialize-result",
  "capabilities/call",
  "capabilities/call-result",
  "capabilities/cancel",
  "capabilities/cancel-result",
  "progress",
  "notification",
  "shutdown",
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export interface Envelope<P = unknown> {
  type: MessageType;
  /** Required on requests and their results (the correlation key); optional on one-way messages. */
  id?: string;
  timestamp: number;
  payload: P;
}

/** Limits applied by both sides to what they receive. */
export const LIMITS = {
  /** Serialized size of one envelope. */
  maxMessageBytes: 1024 * 1024,
  /** Envelope ids, call ids, capability names, progress tokens. */
  maxIdLength: 200,
  /** Cancel reasons and error messages. */
  maxTextLength: 2000,
} as const;

/** The spec's answers for its edge-case table, word for word. */
export const CANCEL_REASONS_TEXT = {
  notFound: "Operation not found",
  alreadyCompleted: "Operation already completed",
} as const;

/** Error codes this implementation sends (the spec names NOT_INITIALIZED; the others are ours). */
export const ERROR_CODES = {
  notInitialized: "NOT_INITIALIZED",
  capabilityNotFound: "CAPABILITY_NOT_FOUND",
  invalidMessage: "INVALID_MESSAGE",
  unknownType: "UNKNOWN_TYPE",
  messageTooLarge: "MESSAGE_TOO_LARGE",
  duplicateCallId: "DUPLICATE_CALL_ID",
  handlerFailed: "HANDLER_FAILED",
} as const;

export interface AgentInfo {
  name: string;
  version: string;
}

export interface InitializeParams {
  agent: AgentInfo;
  protocolVersion: string;
  requestedCapabilities?: string[];
  features?: Record<string, unknown>;
}

export interface InitializeResult {
  sessionId: string;
  protocolVersion: string;
  app: { id: string; name: string; version: string };
  capabilities: { name: string; available: boolean }[];
  features: Record<string, unknown>;
}

export interface CallOptions {
  /** Milliseconds; when it passes the call is cancelled exactly as by a cancel request. */
  timeout?: number;
  progressToken?: string | number;
}

/** `capabilities/call` payload. The callId travels at the top level, beside the capability. */
export interface CallRequest {
  capability: string;
  callId: string;
  params?: Record<string, unknown>;
  options?: CallOptions;
}

export interface AbpError {
  code: string;
  message: string;
  retryable?: boolean;
}

/** `capabilities/call-result` payload. A cancelled call carries no data. */
export interface CallResult {
  success: boolean;
  data?: unknown;
  error?: AbpError;
  metadata?: Record<string, unknown>;
  cancelled?: boolean;
}

/** `capabilities/cancel` payload. */
export interface CancelRequest {
  callId: string;
  reason?: string;
}

/**
 * `capabilities/cancel-result` payload. Without an active session it is
 * `{callId, cancelled: false, error: {code: "NOT_INITIALIZED", …}}`.
 */
export interface CancelResult {
  callId: string;
  cancelled: boolean;
  reason?: string;
  error?: AbpError;
}

export interface ProgressPayload {
  progressToken: string | number;
  progress: number;
  total?: number;
  message?: string;
}

/**
 * `notification` payload. Bad input is answered with `{event: "error", error, inReplyTo?}`
 * (`inReplyTo` is the offending envelope's id when it could be read). `{event: "closing"}` tells a
 * postMessage agent that the app's page is going away.
 */
export interface NotificationPayload {
  event: string;
  error?: AbpError;
  inReplyTo?: string;
  data?: unknown;
}

export interface ShutdownPayload {
  reason?: string;
}

/** The answer type of each request type. */
export const RESULT_TYPE = {
  "initialize": "initialize-result",
  "capabilities/call": "capabilities/call-result",
  "capabilities/cancel": "capabilities/cancel-result",
} as const satisfies Partial<Record<MessageType, MessageType>>;
export type RequestType = keyof typeof RESULT_TYPE;

/**
 * The size a message counts for against the limits: a string's length, or for a structured-clone
 * object, its strings and keys plus 8 per other value (close to its JSON length, without
 * serializing it). Stops counting once over `limit`; nesting deeper than 64 counts as infinite.
 */
export function messageSize(data: unknown, limit: number = Number.POSITIVE_INFINITY): number {
  return typeof data === "string" ? data.length : sizeOf(data, 0, 0, limit);
}

/** `size` plus what `value` counts for; one plain recursive function, no closure per message. */
function sizeOf(value: unknown, size: number, depth: number, limit: number): number {
  if (typeof value === "string") return size + value.length + 2;
  if (typeof value !== "object" || value === null) return size + 8;
  if (depth > 64) return Number.POSITIVE_INFINITY;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && size <= limit; i++) size = sizeOf(value[i], size, depth + 1, limit);
    return size;
  }
  for (const key in value) {
    if (size > limit) return size;
    size = sizeOf((value as Record<string, unknown>)[key], size + key.length + 3, depth + 1, limit);
  }
  return size;
}
