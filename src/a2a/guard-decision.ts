/** What to decide when the guardian gives no usable answer. */
export type FailPolicy = "deny" | "allow";

/** Why the guardian gave no usable answer. */
export type GuardFailure = "unreachable" | "timeout" | "invalid-answer" | "rpc-error";

/** The AOS hook that asked: before sending a cancel (client) or before processing one (server). */
export type GuardHook = "client" | "server";

/** One decision about one cancel: the event an audit log records. */
export interface GuardDecision {
  decision: "allow" | "deny";
  /** `guardian` when the guardian decided; `policy` when the fail policy decided in its place. */
  source: "guardian" | "policy";
  hook: GuardHook;
  taskId: string;
  /** The AOS request's id (a fresh UUID per request). */
  requestId: string;
  /** The guardian's message, or why the policy decided. */
  message: string;
  reasonCode: string[];
  /** The guardian's own reasoning, when it gave one. */
  reasoning?: string;
  /** The decision as the guardian wrote it, when it is not allow or deny (e.g. "modify"). */
  guardianDecision?: string;
  /** Set when `source` is `policy`. */
  failure?: GuardFailure;
  /** Round trip to the guardian, in ms. */
  durationMs: number;
  /** ISO time of the decision. */
  at: string;
}

export type DecisionListener = (decision: GuardDecision) => void;

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
