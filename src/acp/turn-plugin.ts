import type { AnyJob } from "../core/index.js";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import type { RequestJob } from "./engine-jobs.js";
import type { EngineHost } from "./engine-host.js";
import type { EngineEvent } from "./engine-options.js";

/**
 * A feature that decides about a turn's messages, in the engine's list (docs/decisions.md, "Turn
 * plug-ins"). Every hook is optional; for a decision the first plug-in that takes it wins.
 */
export interface TurnPlugin {
  /** An agent request of `sessionId`, before it starts: why it is refused (answered cancelled), or undefined. */
  refuse?(request: JsonRpcRequest, sessionId: string): string | undefined;
  /** A client prompt that opened its session's turn: true when the plug-in keeps (or answered) it. */
  hold?(job: RequestJob, request: JsonRpcRequest): boolean;
  /** A prompt goes to the agent now. */
  promptSent?(job: RequestJob): void;
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
  /** The engine stopped following a session's turn (its work ended, or a side closed). */
  turnEnded?(turn: AnyJob): void;
  /** True while the plug-in follows a turn of `sessionId` that the engine has answered but the agent has not ended. */
  follows?(sessionId: string): boolean;
  /** A side is gone or replaced: nothing more will end the turns followed. */
  closed?(): void;
}

/** Makes a plug-in for one engine, given what the engine offers it. */
export type TurnPluginFactory = (host: EngineHost, graceMs: number) => TurnPlugin;
