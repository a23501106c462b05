import type { AnyJob, CancelReason } from "../core/index.js";
import type { JsonRpcId, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import type { RequestJob } from "./engine-jobs.js";
import type { EngineEvent } from "./engine-options.js";
import type { Side } from "./methods.js";
import type { VersionRules } from "./versions/index.js";

/** What the engine offers its parts: the session turns and the turn aftermath. */
export interface EngineHost {
  rules(): VersionRules;
  now(): number;
  emit(event: EngineEvent): void;
  isOpen(side: Side): boolean;
  /** The running requests `side` issued that pass `test`; never a cleanup request (cancelled for nobody). */
  running(side: Side, test: (job: RequestJob) => boolean): RequestJob[];
  cancel(job: AnyJob, reason: CancelReason): void;
  /** Sends a held request on to the agent now (answered instead when the agent is gone). */
  forward(job: RequestJob, request: JsonRpcRequest): void;
  /** Answers a held request, which never reached the agent. */
  answer(job: RequestJob, response: JsonRpcResponse): void;
  /** Sends a notification the engine made up to `side`. */
  notify(side: Side, message: JsonRpcNotification): void;
}

/** Decides about a turn's messages, in the engine's list; the first plug-in that takes a decision wins ("Turn plug-ins"). */
export interface TurnPlugin {
  /** An agent request of `sessionId`, before it starts: why it is refused (answered cancelled), or undefined. */
  refuse?(request: JsonRpcRequest, sessionId: string): string | undefined;
  /** A client prompt that opened its session's turn: true when the plug-in keeps (or answered) it. */
  hold?(job: RequestJob, request: JsonRpcRequest): boolean;
  /** A prompt goes to the agent now. */
  promptSent?(job: RequestJob): void;
  /** A client request other than a prompt (session/new, session/load, …) goes to the agent now. */
  requestSent?(job: RequestJob): void;
  /** A cancel reached a request never delivered: true when the plug-in held it (the engine answers it now). */
  release?(job: RequestJob): boolean;
  /** A `session/update` from the agent (every plug-in hears it): true drops it. */
  dropUpdate?(params: unknown): boolean;
  /** A reply from the agent to no request in flight (every plug-in hears it): true when expected. */
  expectedReply?(id: JsonRpcId): boolean;
  /** The answer `job`'s issuer gets; `forPeer` when the engine gives it for the handler. */
  answer?(job: RequestJob, response: JsonRpcResponse, forPeer: boolean): JsonRpcResponse;
  /** `job`'s answer, as every `answer` left it, was sent. */
  answered?(job: RequestJob, response: JsonRpcResponse, forPeer: boolean): void;
  /** Each event the engine emits (after its `onEvent`). */
  event?(event: EngineEvent): void;
  /** `session/cancel` cancelled the session's turn. */
  turnCancelled?(turn: AnyJob): void;
  /** v2: the agent answered `session/close` while this cancelled work is not idle: end it for the client now. */
  closedUnderTurn?(work: AnyJob): void;
  /** The engine stopped following a session's turn (its work ended, or a side closed). */
  turnEnded?(turn: AnyJob): void;
  /** True while the plug-in follows a turn of `sessionId` that the engine has answered but the agent has not ended. */
  follows?(sessionId: string): boolean;
  /** A side is gone or replaced: nothing more will end the turns followed. */
  closed?(): void;
}
