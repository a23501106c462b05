import type { AnyJob } from "../core/index.js";
import type { JsonRpcId, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import type { AftermathStats } from "./engine-stats.js";
import type { EngineEvent } from "./events.js";
import type { Side } from "./methods.js";
import type { RequestJob } from "./request-record.js";
import type { VersionRules } from "./versions/index.js";

/** Behaviour added at a few named points of the message path; the engine knows nothing of what it does. */
export interface EnginePlugin {
  readonly stats: Readonly<AftermathStats>;

  /** An agent request of `sessionId`, before it joins the tree: why it is refused (answered cancelled at once), or undefined. */
  refuses(request: JsonRpcRequest, sessionId: string): string | undefined;
  /** A client prompt that just opened its session's turn: true when the plug-in holds it (and later forwards or answers it). */
  holds(job: RequestJob, request: JsonRpcRequest): boolean;
  /** A request not yet delivered was cancelled: true when the plug-in held it (the engine answers it now). */
  released(job: RequestJob): boolean;

  /** A `session/update` from the agent: true drops it. */
  suppresses(params: unknown): boolean;
  /** A reply from the agent to no request in flight: true when the plug-in expected it (not a problem). */
  lateReply(id: JsonRpcId): boolean;

  /** A prompt went to the agent. */
  turnStarted(job: RequestJob): void;
  /** `session/cancel` reached the session's running turn (a prompt, or v2 foreground work). */
  turnCancelled(turn: AnyJob): void;
  /** The engine answered the client's prompt `job` for the agent, which had not answered it. */
  turnAnswered(job: RequestJob): void;
  /** The engine stopped following a session's turn (work ended, or a side closed). */
  turnEnded(turn: AnyJob): void;
  /** A side is gone or replaced: nothing will end the turns a plug-in follows now. */
  sideClosed(): void;
}

/** What the engine offers a plug-in. */
export interface EngineHost {
  rules(): VersionRules;
  now(): number;
  emit(event: EngineEvent): void;
  isOpen(side: Side): boolean;
  /** The session's running turn: its prompt (v1) or its foreground work (v2). */
  turnOf(sessionId: string): AnyJob | undefined;
  /** Sends a held request on to the agent now (answered instead when the agent is gone). */
  forward(job: RequestJob, request: JsonRpcRequest): void;
  /** Answers a held request, which never reached the agent. */
  answer(job: RequestJob, response: JsonRpcResponse): void;
  /** Sends a notification the plug-in made up to `side`. */
  notify(side: Side, message: JsonRpcNotification): void;
  /** The agent really ended the session's foreground work (v2): the engine closes it. */
  endWork(sessionId: string): void;
}
