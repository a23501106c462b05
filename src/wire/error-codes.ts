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
