import type { EngineEvent, TurnPlugin } from "../acp/index.js";
import { ErrorCode, errorResponse, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from "../wire/index.js";
import { type AgentExit, describeExit } from "./agent-process.js";

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

/**
 * `message` itself, or, once the agent has crashed (`exit`), the crash error in place of the
 * engine's -32800 answer naming that exit: an editor takes -32800 for its own Stop and shows
 * nothing. See docs/decisions.md, "Bridge: an agent that ends on its own".
 */
export function crashAnswer(message: JsonRpcMessage, exit: AgentExit | undefined): JsonRpcMessage {
  if (exit === undefined || !("error" in message) || message.error.code !== ErrorCode.RequestCancelled) return message;
  const detail = describeExit(exit);
  const data = message.error.data as { reason?: unknown; detail?: unknown } | undefined;
  if (data?.reason !== "shutdown" || data.detail !== detail) return message;
  return errorResponse(message.id, ErrorCode.InternalError, `The agent stopped before answering: ${detail}`, {
    reason: "agent-exited",
    detail,
    exitCode: exit.code,
    signal: exit.signal,
  });
}

/**
 * The bridge's rules for what the editor is told, as the engine's last turn plug-in: the crash
 * error in place of a -32800 naming the exit, and a deadline answer naming the flag.
 */
export function editorAnswers(deadlines: DeadlineAnswers, crashed: () => AgentExit | undefined): TurnPlugin {
  return {
    answer: (job, response) =>
      job.payload.issuer === "client" ? (deadlines.rewrite(crashAnswer(response, crashed())) as JsonRpcResponse) : response,
  };
}
