import { ErrorCode, errorResponse, type JsonRpcMessage } from "../wire/index.js";
import { type AgentExit, describeExit } from "./agent-process.js";

/**
 * The agent ended on its own while the editor still talked to it: a crash, not a cancel.
 * The engine answers what the agent owed with -32800 naming the exit (as it does for any
 * side that is gone); an editor takes -32800 for its own Stop and shows nothing. So the
 * bridge turns exactly those answers into -32603 errors that name the exit.
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
