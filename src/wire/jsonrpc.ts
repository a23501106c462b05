import { ErrorCode } from "./error-codes.js";

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: "2.0"; id: JsonRpcId; result: unknown }
  | { jsonrpc: "2.0"; id: JsonRpcId; error: JsonRpcErrorObject };

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** What a value turned out to be, with a specific complaint when it is not a message. */
export type Classified =
  | { kind: "request"; message: JsonRpcRequest }
  | { kind: "notification"; message: JsonRpcNotification }
  | { kind: "response"; message: JsonRpcResponse }
  | { kind: "invalid"; problem: string; id: JsonRpcId };

export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" || type === "undefined" ? `an ${type}` : `a ${type}`;
}

export type MessageKind = "request" | "notification" | "response" | "invalid";

/**
 * The kind of a parsed JSON value, without allocating: the hot path's check. It agrees
 * with `classify`, which is called only to explain an invalid value.
 */
export function kindOf(value: unknown): MessageKind {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "invalid";
  const record = value as Record<string, unknown>;
  if (record.jsonrpc !== "2.0") return "invalid";
  const id = record.id;
  const hasId = id !== undefined;
  if (hasId && !isJsonRpcId(id)) return "invalid";
  const method = record.method;
  if (method !== undefined) {
    if (typeof method !== "string") return "invalid";
    const params = record.params;
    if (params !== undefined && (typeof params !== "object" || params === null)) return "invalid";
    return hasId ? "request" : "notification";
  }
  if (!hasId) return "invalid";
  const hasResult = Object.hasOwn(record, "result");
  const hasError = Object.hasOwn(record, "error");
  if (hasResult === hasError) return "invalid";
  return hasError && !isErrorObject(record.error) ? "invalid" : "response";
}

/**
 * Sorts one parsed JSON value into request, notification, response or invalid. Cheap on
 * the valid path (a handful of property reads), specific on the invalid one.
 */
export function classify(value: unknown): Classified {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const problem = Array.isArray(value)
      ? "JSON-RPC batches are not supported by ACP"
      : `a JSON-RPC message must be an object, got ${describe(value)}`;
    return { kind: "invalid", problem, id: null };
  }
  const record = value as Record<string, unknown>;
  const rawId = record.id;
  const hasId = rawId !== undefined;
  const id = hasId && isJsonRpcId(rawId) ? rawId : null;
  if (record.jsonrpc !== "2.0")
    return { kind: "invalid", problem: 'missing or wrong "jsonrpc": must be "2.0"', id };
  if (hasId && !isJsonRpcId(rawId)) {
    return {
      kind: "invalid",
      problem: `invalid "id": must be a string, a finite number or null, got ${describe(rawId)}`,
      id,
    };
  }
  const method = record.method;
  if (method !== undefined) {
    if (typeof method !== "string") return { kind: "invalid", problem: '"method" must be a string', id };
    const params = record.params;
    if (params !== undefined && (typeof params !== "object" || params === null)) {
      return {
        kind: "invalid",
        problem: `"params" must be an object or an array, got ${describe(params)}`,
        id,
      };
    }
    return hasId
      ? { kind: "request", message: value as JsonRpcRequest }
      : { kind: "notification", message: value as JsonRpcNotification };
  }
  if (!hasId)
    return {
      kind: "invalid",
      problem: 'neither "method" nor "id": not a request, notification or response',
      id,
    };
  const hasResult = Object.hasOwn(record, "result");
  const hasError = Object.hasOwn(record, "error");
  if (hasResult === hasError) {
    return { kind: "invalid", problem: 'a response needs exactly one of "result" and "error"', id };
  }
  if (hasError && !isErrorObject(record.error)) {
    return {
      kind: "invalid",
      problem: '"error" must be an object with an integer "code" and a string "message"',
      id,
    };
  }
  return { kind: "response", message: value as JsonRpcResponse };
}

function isErrorObject(value: unknown): value is JsonRpcErrorObject {
  if (typeof value !== "object" || value === null) return false;
  const error = value as Record<string, unknown>;
  return Number.isInteger(error.code) && typeof error.message === "string";
}

export function isRequest(value: JsonRpcMessage): value is JsonRpcRequest {
  return "method" in value && "id" in value;
}

export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}

export function resultResponse(id: JsonRpcId, result: unknown): JsonRpcResponse {
  return { jsonrpc: "2.0", id, result };
}

export function notification(method: string, params: unknown): JsonRpcNotification {
  return { jsonrpc: "2.0", method, params };
}

export function parseErrorResponse(problem: string): JsonRpcResponse {
  return errorResponse(null, ErrorCode.ParseError, `Parse error: ${problem}`);
}

export function invalidRequestResponse(id: JsonRpcId, problem: string): JsonRpcResponse {
  return errorResponse(id, ErrorCode.InvalidRequest, `Invalid request: ${problem}`);
}
