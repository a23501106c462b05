/**
 * acp-cancel/a2a: A2A task cancellation behind AOS guard hooks, on @a2a-js/sdk (an optional
 * peer dependency, loaded only by the server hook at run time).
 */
export { aosAgent } from "./agent-ref.js";
export type { A2aCancelMessage, AosAgent, AosGuardParams, AosGuardRequest, AosParty, AosResult, AosRole, PingResult } from "./aos.js";
export { a2aVersion, type A2aVersion, type CancelInput, cancelMessage } from "./cancel-payload.js";
export {
  CancellableExecutor,
  type CancellableExecutorOptions,
  type ServedTaskPayload,
  type SignalledWork,
  type TaskOwnership,
} from "./cancellable-executor.js";
export { AOS_REASONING, type CancelGuardOptions, cancelGuardInterceptor, cancelReasoning } from "./client-hook.js";
export type { DecisionListener, FailPolicy, GuardDecision, GuardFailure, GuardHook } from "./guard-decision.js";
export { CancelDeniedError, GuardInputError } from "./guard-errors.js";
export { GuardianClient, type GuardianClientOptions, type GuardQuestion } from "./guardian-client.js";
export {
  type GuardianRule,
  type GuardianRules,
  parseGuardianRules,
  RuleBook,
  RulesError,
} from "./guardian-rules.js";
export {
  GUARDIAN_VERSION,
  type GuardianLogEntry,
  ReferenceGuardian,
  type ReferenceGuardianOptions,
  startGuardian,
} from "./reference-guardian.js";
export {
  type CancelGuardHandlerOptions,
  type CancelRoutingOptions,
  GUARD_NAME,
  guardCancelTasks,
  type ReplicaCancels,
  type ReplicaVerdict,
  routeCancelsToOwner,
} from "./server-hook.js";
export { A2aTaskLinks, type A2aTaskPayload, type TaskCancelOutcome, type TaskLinksOptions } from "./task-links.js";
