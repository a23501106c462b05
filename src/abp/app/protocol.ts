/**
 * The ABP wire: envelope, message types, request payloads and limits, shared by the agent side and
 * the page. No imports, so the page loads it as it is. The app's answers are typed by schemas.ts.
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
  /** Each W3C trace value in a call's `options._meta` (W3C baggage allows 8192 bytes). */
  maxTraceValueLength: 8192,
} as const;

/** The W3C trace context keys a call may carry in `options._meta`, as in MCP's and ACP's `_meta`. */
export const TRACE_KEYS = ["traceparent", "tracestate", "baggage"] as const;

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

export interface InitializeParams {
  agent: { name: string; version: string };
  protocolVersion: string;
  requestedCapabilities?: string[];
  features?: Record<string, unknown>;
}

export interface CallOptions {
  /** Milliseconds; when it passes the call is cancelled exactly as by a cancel request. */
  timeout?: number;
  progressToken?: string | number;
  /** The agent's W3C trace context ({@link TRACE_KEYS}), sent only while the agent traces. */
  _meta?: Record<string, string>;
}

/** `capabilities/call` payload: the callId beside the capability, as in the cancel payload. */
export interface CallRequest {
  capability: string;
  callId: string;
  params?: Record<string, unknown>;
  options?: CallOptions;
}

export interface CancelRequest {
  callId: string;
  reason?: string;
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

/** What {@link messageValue} gives for a text message that is not JSON. */
export const NOT_JSON: unique symbol = Symbol("not JSON");

/** A received message as a value: text parsed ({@link NOT_JSON} when it is not JSON), a clone as it is. */
export function messageValue(data: unknown): unknown {
  if (typeof data !== "string") return data;
  try {
    return JSON.parse(data);
  } catch {
    return NOT_JSON;
  }
}

/**
 * A message's UTF-8 size as JSON text, the same on both sides: an object is counted as JSON.stringify
 * would write its strings and keys (plus 8 per other value) without serializing it. Stops once over
 * `limit`; nesting deeper than 64 counts as infinite.
 */
export function messageSize(data: unknown, limit: number = Number.POSITIVE_INFINITY): number {
  return typeof data === "string" ? utf8Size(data, 0, limit, false) : sizeOf(data, 0, 0, limit);
}

function sizeOf(value: unknown, size: number, depth: number, limit: number): number {
  if (typeof value === "string") return utf8Size(value, size + 2, limit, true);
  if (typeof value !== "object" || value === null) return size + 8;
  if (depth > 64) return Number.POSITIVE_INFINITY;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && size <= limit; i++) size = sizeOf(value[i], size, depth + 1, limit);
    return size;
  }
  for (const key in value) {
    if (size > limit) return size;
    size = sizeOf((value as Record<string, unknown>)[key], utf8Size(key, size + 3, limit, true), depth + 1, limit);
  }
  return size;
}

/** `size` plus the UTF-8 bytes of `text`, as a JSON string's contents when `escaped`; a lone surrogate counts as U+FFFD. */
function utf8Size(text: string, size: number, limit: number, escaped: boolean): number {
  // The regex and the table are measured (docs/decisions.md, "ABP's size count").
  if (PLAIN_ASCII.test(text)) return size + text.length;
  for (let i = 0; i < text.length; i++) {
    if (size > limit) return size;
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      size += escaped ? (ESCAPED_ASCII_SIZE[code] ?? 6) : 1;
    } else if (code < 0x800) {
      size += 2;
    } else if (code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair (past the end, charCodeAt gives NaN, which matches no low surrogate).
      size += 4;
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      size += escaped ? 6 : 3;
    } else {
      size += 3;
    }
  }
  return size;
}

const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Each ASCII character's size inside a JSON string: `"` `\` and \b \t \n \f \r 2, other controls 6 (\u00XX), the rest 1. */
const ESCAPED_ASCII_SIZE = Uint8Array.from({ length: 0x80 }, (_, code) => {
  if (code === 0x22 || code === 0x5c || [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(code)) return 2;
  return code < 0x20 ? 6 : 1;
});
