import { CANCEL_REASONS, type CancelReason } from "../core/index.js";
import {
  cancelledErrorData,
  type CancelledErrorData,
  ErrorCode,
  errorResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  jsonText,
  resultResponse,
} from "../wire/index.js";
import { PERMISSION_CANCELLED } from "../wire/acp-shapes.js";
import { Method } from "./methods.js";
import type { RequestJob } from "./engine-jobs.js";
import type { VersionRules } from "./versions/index.js";

const PROMPT_CANCELLED = Object.freeze({ stopReason: "cancelled" });
/** One frozen `data` per reason, shared by a cascade's answers. */
const REASON_ONLY = Object.fromEntries(
  CANCEL_REASONS.map((reason) => [reason, Object.freeze(cancelledErrorData(reason))]),
) as Readonly<Record<CancelReason, Readonly<CancelledErrorData>>>;

/** -32800 with the job's reason: the cancelled answer of a method without a cancelled result. */
export function cancelledError(job: RequestJob, detail?: string): JsonRpcResponse {
  const reason = job.reason ?? "internal";
  const data = detail === undefined ? REASON_ONLY[reason] : cancelledErrorData(reason, detail);
  return errorResponse(job.payload.id, ErrorCode.RequestCancelled, "Request cancelled", data);
}

/** The answer for a request whose handler side is gone: an error naming why. */
export function abandonedAnswer(id: JsonRpcId, detail: string): JsonRpcResponse {
  return errorResponse(id, ErrorCode.RequestCancelled, `Request cancelled: ${detail}`, cancelledErrorData("shutdown", detail));
}

/**
 * A version's answers for a cancelled request (docs/decisions.md, "Normalising the handler's answer"): a prompt has a
 * cancelled result only where it is the turn (v1); where it is not (v2), its result stands and it gets -32800.
 */
export function cancelledAnswers(promptIsTurn: boolean): Pick<VersionRules, "cancelledAnswer" | "normaliseCancelled"> {
  const cancelledAnswer = (job: RequestJob, detail?: string): JsonRpcResponse => {
    const { id, method } = job.payload;
    if (method === Method.prompt && promptIsTurn) return resultResponse(id, PROMPT_CANCELLED);
    if (method === Method.requestPermission) return resultResponse(id, PERMISSION_CANCELLED);
    return cancelledError(job, detail);
  };
  const normaliseCancelled = (job: RequestJob, response: JsonRpcResponse): JsonRpcResponse => {
    const { id, method } = job.payload;
    const isTurn = method === Method.prompt && promptIsTurn;
    if (isTurn && "result" in response && typeof response.result === "object" && response.result !== null) {
      return resultResponse(id, { ...response.result, stopReason: "cancelled" });
    }
    if (isTurn || method === Method.requestPermission) return cancelledAnswer(job);
    return "result" in response ? response : normaliseCancelledError(job, response);
  };
  return { cancelledAnswer, normaliseCancelled };
}

/** A handler's error for a cancelled request, made -32800 with the reason (its own error kept). */
function normaliseCancelledError(job: RequestJob, response: Extract<JsonRpcResponse, { error: unknown }>): JsonRpcResponse {
  const { id } = job.payload;
  const { error } = response;
  const reason = job.reason ?? "internal";
  if (error.code !== ErrorCode.RequestCancelled) {
    // The handler's own error is kept whole, data included.
    const original = error.data === undefined ? { code: error.code, message: error.message } : { ...error };
    return errorResponse(id, ErrorCode.RequestCancelled, "Request cancelled", cancelledErrorData(reason, undefined, original));
  }
  const { data } = error;
  if (data === undefined) return errorResponse(id, error.code, error.message, REASON_ONLY[reason]);
  const given =
    typeof data === "object" && data !== null && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : { detail: typeof data === "string" ? data : jsonText(data) };
  return typeof given.reason === "string" ? response : errorResponse(id, error.code, error.message, { ...given, reason });
}
