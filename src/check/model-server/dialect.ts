/** What each API dialect supplies to the scripted model: routing, reading a request, and the events of an answer. */
import type { ServerResponse } from "node:http";
import type { DialectName } from "./scripts.js";

export type Body = Record<string, unknown>;
/** One SSE event's data: an object sent as JSON, or a string sent as it is (`[DONE]`). */
export type SseData = Body | string;

export interface Dialect {
  readonly name: DialectName;
  /** Whether a request to `path` (no query) is this dialect's. */
  serves(path: string): boolean;
  /** The tool names a request offers: none means it is not a turn (a title, a routing call). */
  offeredTools(body: Body): string[];
  /** Whether the request carries a tool's result (the model's next step after a tool call). */
  carriesToolResult(body: Body): boolean;
  /** A request that is not a turn: its short JSON answer, or undefined to stream `quickText` as a whole answer. */
  quickJson(path: string, body: Body): Body | undefined;
  readonly quickText: string;
  /** Whether each event is named (an `event:` line), by its data's `type`. */
  readonly namedEvents: boolean;
  /** A streamed answer opens; then a held one streams text (`first`: its first piece), or it ends with */
  opening(): SseData[];
  text(delta: string, first: boolean): SseData[];
  /** the whole text, or with a call of the tool `name`. */
  finish(text: string): SseData[];
  toolCall(name: string, args: Body): SseData[];
}

/** One streamed answer in its dialect's events; nothing is written once the agent has closed the request. */
export class AnswerStream {
  private pieces = 0;

  constructor(private readonly dialect: Dialect, private readonly response: ServerResponse) {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    this.write(dialect.opening());
  }

  text(delta: string): void {
    this.write(this.dialect.text(delta, this.pieces++ === 0));
  }

  finish(text: string): void {
    this.write(this.dialect.finish(text));
    this.response.end();
  }

  toolCall(name: string, args: Body): void {
    this.write(this.dialect.toolCall(name, args));
    this.response.end();
  }

  private write(events: readonly SseData[]): void {
    for (const data of events) {
      if (this.response.destroyed || this.response.writableEnded) return;
      const event = this.dialect.namedEvents && typeof data !== "string" ? `event: ${String(data.type)}\n` : "";
      this.response.write(`${event}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    }
  }
}
