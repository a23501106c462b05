import type { CancelReason } from "../core/index.js";
import { notification } from "../wire/index.js";
import type { EngineHost } from "./engine-host.js";
import type { CancelSupport, PortOptions } from "./engine-options.js";
import { Method, type Side } from "./methods.js";
import type { RequestJob } from "./engine-jobs.js";

/** Tells the handling side of a cancelled `job` to stop, in the words it understands. */
export function stopHandler(context: EngineHost, job: RequestJob, handler: Side, reason: CancelReason): void {
  const { id, method, sessionId } = job.payload;
  // An unknown side is sent one too: stable ACP v1, ignored where unsupported.
  const speaksCancel = context.ports[handler].cancelSupport !== "no";
  if (method !== Method.prompt) {
    // Most of a cascade: one `$/cancel_request`, and nothing a turn would need.
    if (speaksCancel) context.notify(handler, notification(Method.cancelRequest, { requestId: id }));
    return;
  }
  const agentEndsTurns = context.agentEndsTurns();
  const sendsCancelRequest = speaksCancel && !(reason === "session" && agentEndsTurns);
  if (sendsCancelRequest) context.notify(handler, notification(Method.cancelRequest, { requestId: id }));
  // An agent that ends turns on `$/cancel_request` and was sent one needs nothing more.
  const agentHeard = agentEndsTurns && sendsCancelRequest;
  // The prompt is the turn (v1), so `session/cancel` can stand for a cancelled prompt.
  const emulate = context.rules().promptIsTurn && reason !== "session";
  if (emulate && sessionId !== undefined && context.ports.agent.inProcess !== true && !agentHeard) {
    // A remote agent that may not know `$/cancel_request` still knows `session/cancel`.
    context.emit({ type: "emulated", side: handler, what: "session/cancel for a cancelled prompt", id });
    context.notify(handler, notification(Method.sessionCancel, { sessionId }));
  }
}

/** What a port's options alone decide about `$/cancel_request`; undefined: the capability decides. */
export function forcedSupport(port: PortOptions): boolean | undefined {
  const forced: CancelSupport = port.cancelSupport ?? "auto";
  if (forced !== "auto") return forced === "yes";
  return port.inProcess === true ? true : undefined;
}
