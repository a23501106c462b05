import { ErrorCode, errorResponse, type JsonRpcMessage } from "../wire/index.js";
import { type AgentExit, describeExit } from "./agent-process.js";

/**
 * The agent crashed: the engine's -32800 answers naming the exit become -32603 (an editor takes
 * -32800 for its own Stop and shows nothing). See docs/decisions.md, "Bridge: an agent that ends on its own".
 */
export class CrashAnswers {
  readonly detail: string;

  constructor(private readonly exit: AgentExit) {
    this.detail = describeExit(exit);
  }

  /** `message` itself, or the crash error when it is the engine's answer for this exit. */
  rewrite(message: JsonRpcMessage): JsonRpcMessage {
    if (!("error" in message) || message.error.code !== ErrorCode.RequestCancelled) return message;
    const data = message.error.data as { reason?: unknown; detail?: unknown } | undefined;
    if (data?.reason !== "shutdown" || data.detail !== this.detail) return message;
    return errorResponse(message.id, ErrorCode.InternalError, `The agent stopped before answering: ${this.detail}`, {
      reason: "agent-exited",
      detail: this.detail,
      exitCode: this.exit.code,
      signal: this.exit.signal,
    });
  }
}
