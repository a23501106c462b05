/**
 * acp-cancel: cancellation that actually stops work in the Agent Client Protocol. Most apps need one line:
 * `withCancellation(acp.agent(...))` or `withCancellation(acp.client())`. This entry exports what
 * docs/embedding.md shows ("API"); the layers' own barrels are no entry of the package.
 */
export {
  type CancellableApp,
  cancellableStream,
  CancelEngine,
  type Cancellation,
  type CancellationOptions,
  type EngineEvent,
  type EngineOptions,
  type MessageStream,
  type NdJsonStreamOptions,
  ndJsonStream,
  type StuckTurn,
  type TurnEndOptions,
  type WithCancellationOptions,
  withCancellation,
} from "./acp/index.js";
// The job tree's public face: the seam to other bindings' calls, why a job was cancelled, the
// error a cancelled call rejects with, and the `data` of every -32800 this library answers.
export { type CancelReason, JobCancelledError, jobOf } from "./core/index.js";
export type { CancelledErrorData } from "./wire/index.js";
