export { CANCEL_REASONS, type CancelEffect, type CancelReason, JobCancelledError } from "./cancel-reason.js";
export { type AnyJob, Job, settleJob } from "./job.js";
export { JobTable } from "./job-table.js";
export { RecentKeys } from "./recent-keys.js";
export { LateReplies } from "./late-replies.js";
export { type ServerCallProtocol, ServerCalls, sharedGrace } from "./server-calls.js";
export { GraceTimers } from "./grace-timers.js";
export { bindHandlerJob, jobOf } from "./handler-job.js";
export {
  type JobCancelOrigin,
  type JobEvent,
  type JobFailure,
  type JobInfo,
  type JobObserver,
  jobObserver,
  setJobObserver,
  traceCarrier,
} from "./observer.js";
