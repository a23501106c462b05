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
  originalError?: { code: number; message: string; data?: unknown },
): CancelledErrorData {
  const data: CancelledErrorData = { reason };
  if (detail !== undefined) data.detail = detail;
  if (originalError !== undefined) data.originalError = originalError;
  return data;
}
