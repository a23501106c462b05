import { errorResponse, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../wire/index.js";
import type { EngineEvent } from "./engine-options.js";
import { sessionIdOf } from "./methods.js";
import type { RequestJob } from "./request-record.js";

/**
 * What to do when a turn the engine answered for the agent has still not really ended
 * when its window passes: `fail` answers the prompts held behind it with an error;
 * `wait` gives the agent one more window (after the caller did something about it,
 * such as stopping the turn's tools).
 */
export type StuckVerdict = "fail" | "wait";

/** A cancelled turn the agent has not ended within the window, as the escalation hook sees it. */
export interface StuckTurn {
  readonly sessionId: string;
  /** The stuck prompt's id (in the client's id space). */
  readonly promptId: JsonRpcId;
  /** Milliseconds since the engine answered the prompt for the agent. */
  readonly stuckForMs: number;
  /** Milliseconds since the prompt went to the agent: the turn's age. */
  readonly turnAgeMs: number;
  /** 1 the first time the window passes, 2 the second, … */
  readonly escalation: number;
  readonly suppressedUpdates: number;
  readonly heldPrompts: number;
}

export interface TurnEndOptions {
  /**
   * How long the agent has to really end a cancelled turn after the engine answered it
   * (its grace expired). Prompts for that session wait at most this long. Default 10000 ms.
   */
  windowMs?: number;
  /** Called each time the window passes with the turn not ended. Default: `fail`. */
  onStuck?: (turn: StuckTurn) => StuckVerdict;
}

export const DEFAULT_TURN_END_WINDOW_MS = 10_000;

/** The agent's stream of a turn (ACP v1 and the v2 draft alike). */
export const SESSION_UPDATE = "session/update";

/** The JSON-RPC error code of a prompt refused because its session's previous turn is stuck. */
export const TURN_STUCK_ERROR_CODE = -32010;

/** What the aftermath needs from the engine. */
export interface AftermathHost {
  now(): number;
  /** Sends a held prompt to the agent now. */
  forward(job: RequestJob, request: JsonRpcRequest): void;
  /** Answers a held prompt (it never reached the agent). */
  refuse(job: RequestJob, response: JsonRpcResponse): void;
  emit(event: EngineEvent): void;
}

/** Counters for summaries; zero while no agent ignored a cancel. */
export interface AftermathStats {
  /** Turns answered for the agent and then tracked to their real end. */
  turnsTracked: number;
  lateUpdatesSuppressed: number;
  lateRequestsRefused: number;
  promptsHeld: number;
  /** Times a window passed with the turn not ended. */
  stuckEscalations: number;
}

interface HeldPrompt {
  job: RequestJob;
  request: JsonRpcRequest;
}

/** One session's turn: answered for the peer, not yet ended by the agent. */
interface Aftermath {
  readonly sessionId: string;
  /** The first prompt answered for the agent: the one errors name. */
  readonly promptId: JsonRpcId;
  /** Every prompt of the session answered for the agent and not yet answered by it. */
  readonly open: Set<JsonRpcId>;
  readonly turnStartedAt: number;
  readonly answeredAt: number;
  suppressed: number;
  held: HeldPrompt[];
  escalations: number;
  /** The window passed and the verdict was `fail`: new prompts are refused at once. */
  failed: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The aftermath of cancelled turns the agent did not end in time. The engine answers such
 * a turn for the agent after the grace period; the agent's own turn goes on. Until it
 * really ends (v1: the agent's late answer to the prompt), the session's updates are not
 * forwarded, the agent's requests are answered cancelled at once, and new prompts for the
 * session wait behind a barrier, bounded by a window and an escalation hook.
 *
 * Off (and free) unless the engine was given `turnEnd`: sessions without an aftermath cost
 * the engine one size check per message it hooks.
 */
export class TurnAftermath {
  private readonly sessions = new Map<string, Aftermath>();
  /** Stuck prompt ids (client's id space) → session, to recognise the agent's late answer. */
  private readonly byPrompt = new Map<JsonRpcId, string>();
  /** When each prompt went to the agent; only kept while enabled. */
  private readonly started = new WeakMap<RequestJob, number>();
  private readonly windowMs: number;
  readonly stats: AftermathStats = {
    turnsTracked: 0,
    lateUpdatesSuppressed: 0,
    lateRequestsRefused: 0,
    promptsHeld: 0,
    stuckEscalations: 0,
  };

  constructor(
    private readonly host: AftermathHost,
    private readonly options: TurnEndOptions | undefined,
  ) {
    this.windowMs = options?.windowMs ?? DEFAULT_TURN_END_WINDOW_MS;
  }

  get enabled(): boolean {
    return this.options !== undefined;
  }

  /** Sessions whose cancelled turn has not really ended. */
  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** A prompt went to the agent: its turn begins now. */
  turnStarted(job: RequestJob): void {
    if (this.options !== undefined) this.started.set(job, this.host.now());
  }

  /** v1: the engine answered the cancelled prompt `job` for the agent: track the agent's own turn. */
  begin(job: RequestJob): void {
    const { sessionId, id } = job.payload;
    if (this.options === undefined || sessionId === undefined) return;
    const existing = this.sessions.get(sessionId);
    if (existing !== undefined) {
      // A second prompt the client sent into the same turn, also left running by the agent:
      // the turn ends when the agent has answered both.
      existing.open.add(id);
      this.byPrompt.set(id, sessionId);
      return;
    }
    this.open(sessionId, id, this.started.get(job) ?? job.payload.cancelledAt);
    this.byPrompt.set(id, sessionId);
  }

  /**
   * v2 draft: the engine gave up on the session's cancelled foreground work for the agent
   * (and told the client it is idle); the agent's own work goes on until its idle
   * `state_update`. `promptId` is the prompt that opened the work (null: the agent's own).
   */
  beginWork(sessionId: string, promptId: JsonRpcId, startedAt: number | undefined): void {
    if (this.options === undefined || this.sessions.has(sessionId)) return;
    this.open(sessionId, promptId, startedAt);
  }

  private open(sessionId: string, promptId: JsonRpcId, startedAt: number | undefined): void {
    const now = this.host.now();
    const aftermath: Aftermath = {
      sessionId,
      promptId,
      open: new Set([promptId]),
      turnStartedAt: startedAt ?? now,
      answeredAt: now,
      suppressed: 0,
      held: [],
      escalations: 0,
      failed: false,
      timer: undefined,
    };
    this.sessions.set(sessionId, aftermath);
    this.stats.turnsTracked++;
    this.arm(aftermath);
    this.host.emit({ type: "turn-outlives-answer", sessionId, id: promptId, windowMs: this.windowMs });
  }

  /**
   * The agent's turn in `sessionId` really ended. The one signal every protocol version
   * gives in its own way: v1 the late answer to the prompt, the v2 draft an idle
   * `state_update`. Held prompts go to the agent now, in the order they came.
   */
  turnEnded(sessionId: string, how: string): void {
    const aftermath = this.sessions.get(sessionId);
    if (aftermath === undefined) return;
    this.forget(aftermath);
    this.host.emit({
      type: "turn-ended",
      sessionId,
      id: aftermath.promptId,
      how,
      afterMs: Math.round(this.host.now() - aftermath.answeredAt),
      suppressedUpdates: aftermath.suppressed,
    });
    for (const { job, request } of aftermath.held) {
      if (job.isRunning) this.host.forward(job, request);
    }
  }

  /** v1: an answer from the agent to a prompt already answered for it. True when it was one. */
  lateAnswer(id: JsonRpcId): boolean {
    const sessionId = this.byPrompt.get(id);
    if (sessionId === undefined) return false;
    this.byPrompt.delete(id);
    const aftermath = this.sessions.get(sessionId);
    aftermath?.open.delete(id);
    if (aftermath?.open.size === 0) this.turnEnded(sessionId, "the agent's late answer to the prompt");
    return true;
  }

  /** A `session/update` from the agent: true when it belongs to a turn already answered (drop it). */
  suppressesUpdate(params: unknown): boolean {
    const sessionId = sessionIdOf(params);
    const aftermath = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (aftermath === undefined) return false;
    aftermath.suppressed++;
    this.stats.lateUpdatesSuppressed++;
    this.host.emit({ type: "late-update-suppressed", sessionId: aftermath.sessionId, count: aftermath.suppressed });
    return true;
  }

  /** An agent request of a session whose turn was answered: counted; the engine answers it cancelled. */
  refusesRequest(sessionId: string): boolean {
    if (!this.sessions.has(sessionId)) return false;
    this.stats.lateRequestsRefused++;
    return true;
  }

  /** A client prompt for `job`'s session: true when it waits (or was refused) instead of going on. */
  holds(job: RequestJob, request: JsonRpcRequest): boolean {
    const sessionId = job.payload.sessionId;
    const aftermath = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (aftermath === undefined) return false;
    if (aftermath.failed) {
      this.host.refuse(job, this.stuckAnswer(aftermath, job.payload.id));
      return true;
    }
    aftermath.held.push({ job, request });
    this.stats.promptsHeld++;
    this.host.emit({ type: "prompt-held", sessionId: aftermath.sessionId, id: job.payload.id, behind: aftermath.promptId });
    return true;
  }

  /** A held prompt was cancelled before it went anywhere. True when it was held here. */
  release(job: RequestJob): boolean {
    const sessionId = job.payload.sessionId;
    const aftermath = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (aftermath === undefined) return false;
    const index = aftermath.held.findIndex((held) => held.job === job);
    if (index === -1) return false;
    aftermath.held.splice(index, 1);
    return true;
  }

  /** The agent side is gone or replaced: nothing more will end these turns. */
  clear(): void {
    for (const aftermath of this.sessions.values()) clearTimeout(aftermath.timer);
    this.sessions.clear();
    this.byPrompt.clear();
  }

  private forget(aftermath: Aftermath): void {
    clearTimeout(aftermath.timer);
    this.sessions.delete(aftermath.sessionId);
    for (const id of aftermath.open) this.byPrompt.delete(id);
  }

  private arm(aftermath: Aftermath): void {
    aftermath.timer = setTimeout(() => this.windowPassed(aftermath), this.windowMs);
    aftermath.timer.unref?.();
  }

  private windowPassed(aftermath: Aftermath): void {
    aftermath.timer = undefined;
    if (this.sessions.get(aftermath.sessionId) !== aftermath) return;
    aftermath.escalations++;
    this.stats.stuckEscalations++;
    const now = this.host.now();
    const stuck: StuckTurn = {
      sessionId: aftermath.sessionId,
      promptId: aftermath.promptId,
      stuckForMs: Math.round(now - aftermath.answeredAt),
      turnAgeMs: Math.round(now - aftermath.turnStartedAt),
      escalation: aftermath.escalations,
      suppressedUpdates: aftermath.suppressed,
      heldPrompts: aftermath.held.length,
    };
    const verdict = this.options?.onStuck?.(stuck) ?? "fail";
    this.host.emit({ type: "turn-stuck", ...stuck, verdict });
    // The hook may have ended the turn or replaced the agent (restart).
    if (this.sessions.get(aftermath.sessionId) !== aftermath) return;
    if (verdict === "wait") {
      this.arm(aftermath);
      return;
    }
    aftermath.failed = true;
    const held = aftermath.held;
    aftermath.held = [];
    for (const { job } of held) {
      if (job.isRunning) this.host.refuse(job, this.stuckAnswer(aftermath, job.payload.id));
    }
  }

  /** The error a prompt gets when the turn before it is stuck: names the turn and how long. */
  private stuckAnswer(aftermath: Aftermath, id: JsonRpcId): JsonRpcResponse {
    const now = this.host.now();
    const stuckForMs = Math.round(now - aftermath.answeredAt);
    const turnAgeMs = Math.round(now - aftermath.turnStartedAt);
    return errorResponse(
      id,
      TURN_STUCK_ERROR_CODE,
      `Session ${aftermath.sessionId} is stuck: the agent has not ended its cancelled turn ` +
      `(prompt ${JSON.stringify(aftermath.promptId)}) ${stuckForMs} ms after it was answered cancelled ` +
      `(the turn began ${turnAgeMs} ms ago); this prompt was not sent to the agent`,
      {
        reason: "turn-stuck",
        sessionId: aftermath.sessionId,
        stuckPromptId: aftermath.promptId,
        stuckForMs,
        turnAgeMs,
        suppressedUpdates: aftermath.suppressed,
      },
    );
  }
}
