/**
 * acp-cancel/a2a: A2A task cancellation behind AOS guard hooks, on @a2a-js/sdk (an optional
 * peer dependency, loaded only by the server hook at run time). See docs/a2a.md.
 */
// The client hook, and the error a denied cancel rejects with.
export { type CancelGuardOptions, cancelGuardInterceptor, cancelReasoning } from "./client-hook.js";
export { CancelDeniedError, type GuardDecision, GuardInputError } from "./guard-decision.js";
// The server side: the guarded request handler, and an executor whose work gets a signal per task.
export {
  type CancelGuardHandlerOptions,
  type CancelRoutingOptions,
  guardCancelTasks,
  routeCancelsToOwner,
} from "./server-hook.js";
export { CancellableExecutor, type CancellableExecutorOptions } from "./cancellable-executor.js";
// Remote tasks as jobs of the tree.
export { A2aTaskLinks, type TaskCancelOutcome, type TaskLinksOptions } from "./task-links.js";
// The guardian: its client, the decision every hook reports, and the reference guardian.
export { GuardianClient, type GuardianClientOptions } from "./guardian-client.js";
export { type GuardianRules, RulesError } from "./guardian-rules.js";
export { MemoryRateCounter, type RateCounter } from "./guardian-counter.js";
export {
  type GuardianLogEntry,
  ReferenceGuardian,
  type ReferenceGuardianOptions,
  startGuardian,
} from "./reference-guardian.js";
