export { cancellableStream } from "./cancellable-stream.js";
export { type Cancellation, type CancellationOptions, createCancellation } from "./cancellation.js";
export { abandonedAnswer, cancelledAnswer, normaliseCancelled } from "./cancelled-answers.js";
export {
  CAPABILITY_KEY,
  type CancellationCapability,
  CancellationCapabilitySchema,
  type CancellationData,
  CancellationDataSchema,
  OUR_CAPABILITY,
  readCapability,
  withCapability,
} from "./capability.js";
export { CLEANUP_METHODS, cleanupMethodSet } from "./cleanup-methods.js";
export { CancelEngine, type EngineStats } from "./engine.js";
export {
  type AftermathStats,
  type CancelSupport,
  DEFAULT_GRACE_MS,
  DEFAULT_TURN_END_WINDOW_MS,
  type Deliver,
  type EngineOptions,
  type PortOptions,
  TURN_STUCK_ERROR_CODE,
  type TurnEndOptions,
} from "./engine-options.js";
export type { EngineEvent, StuckTurn, StuckVerdict } from "./events.js";
export { Method, otherSide, type Side, sessionIdOf } from "./methods.js";
export type { RequestJob, RequestRecord } from "./request-record.js";
export type { MessageStream } from "./sdk-stream.js";
export { type CancellableApp, type WithCancellationOptions, withCancellation } from "./with-cancellation.js";
export { type CancellableNdJsonStream, hasBuiltInEngine, type NdJsonStreamOptions, ndJsonStream } from "./ndjson-stream.js";

// The seam to other bindings: the job of the request a scoped handler is handling.
export { jobOf } from "../core/index.js";
