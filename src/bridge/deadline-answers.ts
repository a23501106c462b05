import type { EngineEvent } from "../acp/index.js";
import { ErrorCode, type JsonRpcId, type JsonRpcMessage } from "../wire/index.js";

/** The engine's deadline answers to the editor, with a message naming the method, deadline and flag. */
export class DeadlineAnswers {
  private readonly expired = new Map<JsonRpcId, string>();

  constructor(private readonly deadlines: Readonly<Record<string, number>>) {}

  /** Notes a deadline that passed on an editor's request; the text that will name it. */
  event(event: EngineEvent): string | undefined {
    if (event.type !== "cancel" || event.side !== "client" || event.reason !== "deadline") return undefined;
    const seconds = (this.deadlines[event.method] ?? 0) / 1000;
    const detail =
      `the agent did not answer ${event.method} within ${seconds} s ` +
      `(the bridge's deadline: --timeout ${event.method}=SECONDS changes it)`;
    this.expired.set(event.id, detail);
    return detail;
  }

  /** `message` itself, or the engine's deadline answer with a message naming the cause. */
  rewrite(message: JsonRpcMessage): JsonRpcMessage {
    if (this.expired.size === 0 || "method" in message || message.id === null) return message;
    const detail = this.expired.get(message.id);
    if (detail === undefined) return message;
    this.expired.delete(message.id);
    if (!("error" in message)) return message; // a partial result stands
    const data = message.error.data as { reason?: unknown } | undefined;
    if (message.error.code !== ErrorCode.RequestCancelled || data?.reason !== "deadline") return message;
    return { ...message, error: { ...message.error, message: `Request cancelled: ${detail}` } };
  }
}
