/** JSON-RPC 2.0 and ACP error codes used by this library. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** LSP's reserved RequestCancelled, adopted by ACP for `$/cancel_request`. */
  RequestCancelled: -32800,
} as const;

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

/** An id as text for an error or a log line: a peer's string id may be megabytes long, so it is cut. */
export function idText(id: JsonRpcId): string {
  const text = JSON.stringify(id);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

const ID_LESS_ANSWER =
  'a response without "id": the peer\'s defect (JSON-RPC answers no notification, and an error it cannot ' +
  'tie to a request has "id": null); ignored';

/** Why a parsed JSON value is not a JSON-RPC message (a specific problem), or undefined when it is one. */
export function problemOf(value: unknown): string | undefined {
  if (Array.isArray(value)) return "JSON-RPC batches are not supported by ACP";
  if (typeof value !== "object" || value === null) return `a JSON-RPC message must be an object, got ${describe(value)}`;
  const record = value as Record<string, unknown>;
  if (record.jsonrpc !== "2.0") return 'missing or wrong "jsonrpc": must be "2.0"';
  const id = record.id;
  const hasId = id !== undefined;
  if (hasId && !isJsonRpcId(id)) return `invalid "id": must be a string, a finite number or null, got ${describe(id)}`;
  const method = record.method;
  if (method !== undefined) {
    if (typeof method !== "string") return '"method" must be a string';
    const params = record.params;
    if (params !== undefined && (typeof params !== "object" || params === null)) {
      return `"params" must be an object or an array, got ${describe(params)}`;
    }
    return undefined;
  }
  // codex-acp answers the $/cancel_request notification without an id: say whose defect it is.
  if (!hasId && (Object.hasOwn(record, "result") || Object.hasOwn(record, "error"))) return ID_LESS_ANSWER;
  if (!hasId) return 'neither "method" nor "id": not a request, notification or response';
  const hasResult = Object.hasOwn(record, "result");
  if (hasResult === Object.hasOwn(record, "error")) return 'a response needs exactly one of "result" and "error"';
  if (!hasResult && !isErrorObject(record.error)) return '"error" must be an object with an integer "code" and a string "message"';
  return undefined;
}

/** What a message that {@link problemOf} passed is. */
export function kindOf(message: JsonRpcMessage): "request" | "notification" | "response" {
  const { id, method } = message as { id?: unknown; method?: unknown };
  return method === undefined ? "response" : id === undefined ? "notification" : "request";
}

/** The id of a value that may be no message: null unless it is a valid one. */
export function validIdOf(value: unknown): JsonRpcId {
  const id = (value as { id?: unknown } | null)?.id;
  return isJsonRpcId(id) ? id : null;
}

/** Sorts one parsed JSON value into request, notification, response or invalid (with a specific problem). */
export function classify(value: unknown): Classified {
  const problem = problemOf(value);
  if (problem !== undefined) return { kind: "invalid", problem, id: validIdOf(value) };
  return { kind: kindOf(value as JsonRpcMessage), message: value } as Classified;
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
