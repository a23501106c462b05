import type { CancelReason } from "../core/index.js";

/** The `data` of every -32800 this library produces, whichever binding produced it. */
export interface CancelledErrorData {
  reason: CancelReason;
  detail?: string;
  /** The handler's own error, when it answered a cancelled request with another error. */
  originalError?: { code: number; message: string; data?: unknown };
}

export function cancelledErrorData(
  reason: CancelReason,
  detail?: string,
  originalError?: CancelledErrorData["originalError"],
): CancelledErrorData {
  return { reason, ...(detail === undefined ? {} : { detail }), ...(originalError === undefined ? {} : { originalError }) };
}
