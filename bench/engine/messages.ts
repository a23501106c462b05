/** JSON-RPC message objects for feeding CancelEngine directly (built outside the timed loops). */
export type Message = Record<string, unknown>;

export const request = (
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
): Message => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

export const result = (id: number | string, value: unknown = {}): Message => ({
  jsonrpc: "2.0",
  id,
  result: value,
});

export const error = (id: number | string, code: number, message: string): Message => ({
  jsonrpc: "2.0",
  id,
  error: { code, message },
});

export const notification = (method: string, params: Record<string, unknown>): Message => ({
  jsonrpc: "2.0",
  method,
  params,
});

/** Ids that never collide across measurements in one process. */
let nextId = 1;
export function freshIds(count: number): number {
  const first = nextId;
  nextId += count;
  return first;
}
