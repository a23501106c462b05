/**
 * acp-cancel/a2a: A2A task cancellation behind AOS guard hooks, on @a2a-js/sdk (an optional
 * peer dependency, loaded only by the server hook at run time). See docs/a2a.md.
 */
export { type CancelGuardOptions, cancelGuardInterceptor, cancelReasoning } from "./client-hook.js";
export { CancelDeniedError, type GuardDecision, GuardInputError } from "./guard-decision.js";
export {
  type CancelGuardHandlerOptions,
  type CancelRoutingOptions,
  guardCancelTasks,
  routeCancelsToOwner,
} from "./server-hook.js";
export { CancellableExecutor, type CancellableExecutorOptions } from "./cancellable-executor.js";
export { A2aTaskLinks, type TaskCancelOutcome, type TaskLinksOptions } from "./task-links.js";
export { GuardianClient, type GuardianClientOptions } from "./guardian-client.js";
export { type GuardianRules, RulesError } from "./guardian-rules.js";
export { MemoryRateCounter, type RateCounter } from "./guardian-counter.js";
export {
  type GuardianLogEntry,
  ReferenceGuardian,
  type ReferenceGuardianOptions,
  startGuardian,
} from "./reference-guardian.js";
