import type { AnyJob, CancelReason } from "../core/index.js";
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import type { EngineEvent } from "./engine-options.js";
import type { Side } from "./methods.js";
import type { RequestJob } from "./engine-jobs.js";
import type { VersionRules } from "./versions/index.js";

/** What the engine offers its parts: the session turns and the turn aftermath. */
export interface EngineHost {
  rules(): VersionRules;
  now(): number;
  emit(event: EngineEvent): void;
  isOpen(side: Side): boolean;
  isCleanup(method: string): boolean;
  /** The running requests `side` issued that pass `test`. */
  running(side: Side, test: (job: RequestJob) => boolean): RequestJob[];
  cancel(job: AnyJob, reason: CancelReason): void;
  /** Sends a held request on to the agent now (answered instead when the agent is gone). */
  forward(job: RequestJob, request: JsonRpcRequest): void;
  /** Answers a held request, which never reached the agent. */
  answer(job: RequestJob, response: JsonRpcResponse): void;
  /** Sends a notification the engine made up to `side`. */
  notify(side: Side, message: JsonRpcNotification): void;
}
