/**
 * Why a job was cancelled:
 * - `external`: the request's issuer asked (`$/cancel_request`).
 * - `session`: the session's turn was cancelled (`session/cancel`, `session/close`).
 * - `deadline`: a configured deadline passed.
 * - `shutdown`: the connection or process is going away.
 * - `internal`: the handler gave up on its own (its own abort, a library timeout).
 */
export type CancelReason = "external" | "session" | "deadline" | "shutdown" | "internal";

export const CANCEL_REASONS: readonly CancelReason[] = ["external", "session", "deadline", "shutdown", "internal"];

/** What an idempotent cancel did, for a protocol's acknowledgement (ABP's `cancelled:false`). */
export type CancelEffect = "cancelled" | "not-found" | "already-settled" | "already-cancelled";

/** The error a job's AbortSignal carries once it is cancelled. */
export class JobCancelledError extends Error {
  override readonly name = "AbortError";
  readonly code = "ABORT_ERR";
  constructor(readonly reason: CancelReason) {
    super(`cancelled (${reason})`);
  }
}
