import type { GuardDecision } from "./guard-decision.js";

/** Thrown by the client hook when the guard denies a cancel (nothing was sent); carries the whole decision. */
export class CancelDeniedError extends Error {
  override readonly name = "CancelDeniedError";
  readonly taskId: string;
  readonly reasonCode: readonly string[];
  constructor(readonly decision: GuardDecision) {
    super(`cancel of task ${decision.taskId} denied by the AOS guard: ${decision.message}`);
    this.taskId = decision.taskId;
    this.reasonCode = decision.reasonCode;
  }
}

/** A guard was asked about something that is not a valid cancel; the guardian was not asked. */
export class GuardInputError extends TypeError {
  override readonly name = "GuardInputError";
}
