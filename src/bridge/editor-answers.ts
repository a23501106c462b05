import type { EngineEvent, RequestJob, TurnPlugin } from "../acp/index.js";
import { ErrorCode, errorResponse, type JsonRpcId, type JsonRpcResponse } from "../wire/index.js";
import { type AgentExit, describeExit } from "./agent-process.js";
import { type BridgeSettings, deadlineDetail } from "./bridge-options.js";

/**
 * What the editor is told, as the engine's last turn plug-in: the crash error in place of a -32800
 * naming the exit, and a deadline answer naming the method, deadline and flag.
 */
export class EditorAnswers implements TurnPlugin {
  /** Editor requests whose deadline passed, with its cancel reason and the text that names it. */
  private readonly expired = new Map<JsonRpcId, { reason: string; detail: string }>();

  constructor(
    private readonly settings: BridgeSettings,
    /** Set once the agent ended on its own. */
    private readonly crashed: () => AgentExit | undefined,
    private readonly warn: (text: string) => void,
  ) {}

  /** A deadline a flag set passed on an editor's request: logged, and noted for its answer. */
  event(event: EngineEvent): void {
    if (event.type !== "cancel" || event.side !== "client") return;
    const detail = deadlineDetail(event.reason, event.method, this.settings);
    if (detail === undefined) return;
    this.expired.set(event.id, { reason: event.reason, detail });
    this.warn(`editor request ${JSON.stringify(event.id)}: ${detail}`);
  }

  answer(job: RequestJob, response: JsonRpcResponse): JsonRpcResponse {
    return job.payload.issuer === "client" ? this.deadlineAnswer(crashAnswer(response, this.crashed())) : response;
  }

  /** `response` itself, or the engine's deadline answer with a message naming the cause (a partial result stands). */
  private deadlineAnswer(response: JsonRpcResponse): JsonRpcResponse {
    if (response.id === null) return response;
    const expired = this.expired.get(response.id);
    if (expired === undefined) return response;
    this.expired.delete(response.id);
    if (!("error" in response) || response.error.code !== ErrorCode.RequestCancelled) return response;
    if ((response.error.data as { reason?: unknown } | undefined)?.reason !== expired.reason) return response;
    return { ...response, error: { ...response.error, message: `Request cancelled: ${expired.detail}` } };
  }
}

/**
 * `response` itself, or, once the agent has crashed, the crash error in place of the engine's
 * -32800 naming that exit: an editor takes -32800 for its own Stop and shows nothing
 * (docs/decisions.md, "Bridge: an agent that ends on its own").
 */
function crashAnswer(response: JsonRpcResponse, exit: AgentExit | undefined): JsonRpcResponse {
  if (exit === undefined || !("error" in response) || response.error.code !== ErrorCode.RequestCancelled) return response;
  const detail = describeExit(exit);
  const data = response.error.data as { reason?: unknown; detail?: unknown } | undefined;
  if (data?.reason !== "shutdown" || data.detail !== detail) return response;
  const exitData = { reason: "agent-exited", detail, exitCode: exit.code, signal: exit.signal };
  return errorResponse(response.id, ErrorCode.InternalError, `The agent stopped before answering: ${detail}`, exitData);
}
