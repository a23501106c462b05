/** What each API dialect supplies to the scripted model: routing, reading a request, and streaming an answer. */
import type { ServerResponse } from "node:http";
import type { DialectName } from "./scripts.js";

export type Body = Record<string, unknown>;

/** One streamed answer, in a dialect's wire format. */
export interface AnswerStream {
  /** Status line, headers and the opening events. */
  begin(): void;
  /** One more piece of text. */
  text(delta: string): void;
  /** The last piece of text, and the end of the answer. */
  finish(text: string): void;
  /** A call of the tool `name` with `args`, and the end of the answer. */
  toolCall(name: string, args: Record<string, unknown>): void;
}

export interface Dialect {
  readonly name: DialectName;
  /** Whether a request to `path` (no query) is this dialect's. */
  serves(path: string): boolean;
  /** The tool names a request offers: none means it is not a turn (a title, a routing call). */
  offeredTools(body: Body): string[];
  /** Whether the request carries a tool's result (the model's next step after a tool call). */
  carriesToolResult(body: Body): boolean;
  /** A short, complete, well-formed answer for a request that is not a turn. */
  quickAnswer(path: string, body: Body, response: ServerResponse): void;
  stream(response: ServerResponse): AnswerStream;
}

export function sendJson(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export function beginSse(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

/** One SSE event (named or not); nothing once the agent has closed the request. */
export function writeSse(response: ServerResponse, data: unknown, event?: string): void {
  if (response.destroyed || response.writableEnded) return;
  response.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}
