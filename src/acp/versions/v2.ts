import { type JsonRpcResponse, resultResponse } from "../../wire/index.js";
import { cancelledError, normaliseCancelled, normaliseCancelledError } from "../cancelled-answers.js";
import { Method } from "../methods.js";
import type { RequestJob } from "../request-record.js";
import type { VersionRules, WorkChange } from "./rules.js";

const PERMISSION_CANCELLED = Object.freeze({ outcome: Object.freeze({ outcome: "cancelled" }) });

/**
 * The answer v2 allows for a cancelled request: the `cancelled` permission outcome, else
 * -32800 with the reason. A prompt has no cancelled result in v2: an uninserted prompt is
 * -32800, an inserted one already has its `{messageId}`.
 */
function cancelledAnswerV2(job: RequestJob, detail?: string): JsonRpcResponse {
  if (job.payload.method === Method.requestPermission) return resultResponse(job.payload.id, PERMISSION_CANCELLED);
  return cancelledError(job, detail);
}

/** The handler's result stands (a prompt's `{messageId}` untouched); an error becomes -32800. */
function normaliseCancelledV2(job: RequestJob, response: JsonRpcResponse): JsonRpcResponse {
  if (job.payload.method === Method.prompt) {
    return "result" in response ? response : normaliseCancelledError(job, response);
  }
  return normaliseCancelled(job, response);
}

/** `session/update` with a `state_update`: running / requires_action start foreground work, idle ends it. */
function workChangeV2(params: unknown): WorkChange {
  const update = (params as { update?: { sessionUpdate?: unknown; state?: unknown } } | undefined)?.update;
  if (update?.sessionUpdate !== "state_update") return undefined;
  const state = update.state;
  if (state === "idle") return "end";
  return state === "running" || state === "requires_action" ? "start" : undefined;
}

/**
 * The ACP v2 draft: the prompt answer acknowledges insertion, foreground work runs from the
 * prompt (or a running / requires_action `state_update`) to the idle `state_update`, and
 * capabilities live in `capabilities` both ways.
 */
export const V2_RULES: VersionRules = Object.freeze({
  version: 2,
  passThrough: false,
  capabilityField: Object.freeze({ client: "capabilities", agent: "capabilities" }),
  promptIsTurn: false,
  workChange: workChangeV2,
  cancelledAnswer: cancelledAnswerV2,
  normaliseCancelled: normaliseCancelledV2,
});
