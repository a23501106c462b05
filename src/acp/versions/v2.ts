import { type JsonRpcNotification, notification } from "../../wire/index.js";
import { cancelledAnswers } from "../cancelled-answers.js";
import { Method } from "../methods.js";
import type { SessionWork } from "../engine-jobs.js";
import type { VersionRules, WorkChange } from "./index.js";

/** `session/update` with a `state_update`: running / requires_action start foreground work, idle ends it. */
function workChangeV2(params: unknown): WorkChange {
  const update = (params as { update?: { sessionUpdate?: unknown; state?: unknown } } | undefined)?.update;
  if (update?.sessionUpdate !== "state_update") return undefined;
  const state = update.state;
  if (state === "idle") return "end";
  return state === "running" || state === "requires_action" ? "start" : undefined;
}

/** What is read of a permission's subject, and of an item of background work. */
interface Subject {
  type?: unknown;
  toolCall?: { toolCallId?: unknown };
  toolCallId?: unknown;
  terminalId?: unknown;
}

/** A permission request whose subject is a tool call or terminal listed as background work. */
function forBackgroundV2(method: string, params: unknown, work: SessionWork): boolean {
  if (method !== Method.requestPermission) return false;
  const background = (work.snapshot as { background?: unknown } | undefined)?.background;
  const subject = (params as { subject?: Subject | null } | undefined)?.subject;
  if (!Array.isArray(background) || typeof subject !== "object" || subject === null) return false;
  const toolCallId = subject.type === "tool_call" ? subject.toolCall?.toolCallId : subject.toolCallId;
  const terminalId = subject.type === "command" ? subject.terminalId : undefined;
  return (background as Subject[]).some(
    (item) =>
      (toolCallId != null && item.type === "tool_call" && item.toolCallId === toolCallId) ||
      (terminalId != null && item.type === "terminal" && item.terminalId === terminalId),
  );
}

/** The idle `state_update` (stopReason `cancelled`) that ends a session's cancelled work for the client. */
function cancelledWorkEndV2(sessionId: string): JsonRpcNotification {
  return notification(Method.sessionUpdate, {
    sessionId,
    update: { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" },
  });
}

/** The ACP v2 draft: the prompt answer acknowledges insertion; work runs until the idle `state_update`. */
export const V2_RULES: VersionRules = Object.freeze({
  passThrough: false,
  capabilityField: Object.freeze({ client: "capabilities", agent: "capabilities" }),
  promptIsTurn: false,
  workChange: workChangeV2,
  forBackground: forBackgroundV2,
  cancelledWorkEnd: cancelledWorkEndV2,
  ...cancelledAnswers(false),
});
