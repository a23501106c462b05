import type { CancelReason } from "../core/index.js";
import { notification, type JsonRpcNotification } from "../wire/index.js";
import type { PortOptions } from "./engine-options.js";
import type { RequestJob } from "./engine-jobs.js";
import { Method, type Side } from "./methods.js";
import type { Negotiation } from "./negotiation.js";

/** What tells the handling side of a cancelled request to stop; `emulated`: the one standing in for a cancel it may not know. */
export interface StopMessages {
  messages: JsonRpcNotification[];
  emulated?: JsonRpcNotification;
}

/** The words the handling side of a cancelled `job` understands, to tell it to stop. */
export function stopMessages(
  job: RequestJob,
  handler: Side,
  reason: CancelReason,
  ports: Readonly<Record<Side, PortOptions>>,
  negotiation: Negotiation,
): StopMessages {
  const { id, method, sessionId } = job.payload;
  // An unknown side is sent one too: stable ACP v1, ignored where unsupported.
  const speaksCancel = ports[handler].cancelSupport !== "no";
  const cancelRequest = () => notification(Method.cancelRequest, { requestId: id });
  // Most of a cascade: one `$/cancel_request`, and nothing a turn would need.
  if (method !== Method.prompt) return { messages: speaksCancel ? [cancelRequest()] : [] };
  const agentInProcess = ports.agent.inProcess === true;
  // The agent advertised that it ends turns on `session/cancel` (and is not in this process).
  const agentEndsTurns = !agentInProcess && negotiation.capabilities.agent?.sessionCancel === true;
  // Any other remote v1 agent is stopped by `session/cancel` alone, which v1 requires it to honour.
  // A second cancel of the same turn hurts: codex-acp 2.6 lets the next prompt join a turn it
  // answered cancelled, and claude-agent-acp 0.101 drops a `$/cancel_request` sent with its prompt
  // (docs/interop.md).
  const onlySessionCancel = !agentInProcess && !agentEndsTurns && negotiation.rules.promptIsTurn;
  const sendsCancelRequest = speaksCancel && !onlySessionCancel && !(reason === "session" && agentEndsTurns);
  const messages = sendsCancelRequest ? [cancelRequest()] : [];
  // An agent that ends turns on `$/cancel_request` and was sent one needs nothing more.
  const agentHeard = agentEndsTurns && sendsCancelRequest;
  // The prompt is the turn (v1), so `session/cancel` can stand for a cancelled prompt.
  const emulate = negotiation.rules.promptIsTurn && reason !== "session";
  if (!emulate || sessionId === undefined || agentInProcess || agentHeard) return { messages };
  // A remote agent that may not know `$/cancel_request` still knows `session/cancel`.
  const emulated = notification(Method.sessionCancel, { sessionId });
  messages.push(emulated);
  return { messages, emulated };
}
