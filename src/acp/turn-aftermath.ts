import { type AnyJob, GraceTimers } from "../core/index.js";
import { errorResponse, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../wire/index.js";
import { DEFAULT_TURN_END_WINDOW_MS, type StuckTurn, TURN_STUCK_ERROR_CODE, type TurnEndOptions } from "./engine-options.js";
import { sessionIdOf } from "../wire/acp-shapes.js";
import { isWorkJob, type RequestJob, type WorkJob } from "./engine-jobs.js";
import { Method } from "./methods.js";
import type { EngineHost, TurnPlugin } from "./turn-plugin.js";

/** The counters of the turns followed past their answer (`turnEnd`), at zero; plain, so they compare equal to a literal. */
export function noTurnsFollowed() {
  return {
    /** Turns answered for the agent and then tracked to their real end. */
    turnsTracked: 0,
    lateUpdatesSuppressed: 0,
    lateRequestsRefused: 0,
    promptsHeld: 0,
    /** Times a window passed with the turn not ended. */
    stuckEscalations: 0,
  };
}

export type AftermathStats = ReturnType<typeof noTurnsFollowed>;

/** One session's turn: answered for the peer, not yet ended by the agent. */
class Aftermath {
  /** Every prompt of the session answered for the agent and not yet answered by it (v1). */
  readonly open = new Set<JsonRpcId>();
  suppressedUpdates = 0;
  readonly held: { job: RequestJob; request: JsonRpcRequest }[] = [];
  escalation = 0;
  /** The window passed with the verdict `fail`: new prompts are refused at once. */
  failed = false;

  constructor(
    readonly sessionId: string,
    /** The first prompt answered for the agent (v2: the one that opened the work): the one errors name. */
    readonly promptId: JsonRpcId,
    readonly turnStartedAt: number,
    readonly answeredAt: number,
  ) {}
}

/**
 * The plug-in `turnEnd` turns on: an answered turn is followed to its real end (v1: the agent's late answer; v2: its idle
 * `state_update`), its updates dropped, requests refused, new prompts held (docs/decisions.md, "The real end of a turn").
 */
export class TurnAftermath implements TurnPlugin {
  private readonly sessions = new Map<string, Aftermath>();
  private readonly sentAt = new WeakMap<RequestJob, number>();
  /** Cancelled foreground work (v2), in its grace. */
  private readonly workGrace: GraceTimers<WorkJob>;
  private readonly windows: GraceTimers<Aftermath>;
  readonly stats = noTurnsFollowed();

  constructor(
    private readonly host: EngineHost,
    private readonly options: TurnEndOptions,
    graceMs: number,
  ) {
    this.workGrace = new GraceTimers(graceMs, (work) => this.workGivenUp(work));
    this.windows = new GraceTimers(options.windowMs ?? DEFAULT_TURN_END_WINDOW_MS, (aftermath) => this.windowPassed(aftermath));
  }

  promptSent(job: RequestJob): void {
    this.sentAt.set(job, this.host.now());
  }

  /** v1: the engine answered the cancelled prompt `job` for the agent: track the agent's own turn. */
  answered(job: RequestJob, _response: JsonRpcResponse, forPeer: boolean): void {
    const { sessionId, id, method, issuer } = job.payload;
    if (!forPeer || method !== Method.prompt || issuer !== "client") return;
    if (sessionId === undefined || !this.host.rules().promptIsTurn) return;
    if (!this.host.isOpen("agent") || !this.host.isOpen("client")) return;
    const aftermath = this.sessions.get(sessionId) ?? this.open(sessionId, id, this.sentAt.get(job) ?? job.payload.cancelledAt);
    // A second prompt into the same turn: it ends when the agent has answered both.
    aftermath.open.add(id);
  }

  /** v2: cancelled foreground work has no answer to give: a grace of its own bounds it. */
  turnCancelled(turn: AnyJob): void {
    if (isWorkJob(turn)) this.workGrace.start(turn);
  }

  closedUnderTurn(work: AnyJob): void {
    if (!isWorkJob(work)) return;
    this.workGrace.stop(work);
    this.workGivenUp(work);
  }

  turnEnded(turn: AnyJob): void {
    if (isWorkJob(turn)) this.workGrace.stop(turn);
  }

  follows(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** v1: an answer from the agent to a prompt already answered for it. True when it was one. */
  expectedReply(id: JsonRpcId): boolean {
    for (const aftermath of this.sessions.values()) {
      if (!aftermath.open.delete(id)) continue;
      if (aftermath.open.size === 0) this.ended(aftermath.sessionId, "the agent's late answer to the prompt");
      return true;
    }
    return false;
  }

  /** True drops an update of a turn already answered; the idle one (v2: the engine ended the work) too: the client had ours. */
  dropUpdate(params: unknown): boolean {
    if (this.sessions.size === 0) return false;
    const aftermath = this.of(sessionIdOf(params));
    if (aftermath === undefined) return false;
    if (this.host.rules().workChange(params) === "end") {
      this.ended(aftermath.sessionId, "the idle state_update");
      return true;
    }
    aftermath.suppressedUpdates++;
    this.stats.lateUpdatesSuppressed++;
    this.host.emit({ type: "late-update-suppressed", sessionId: aftermath.sessionId, count: aftermath.suppressedUpdates });
    return true;
  }

  /** An agent request of a session whose turn was answered: the client was told that turn is over. */
  refuse(request: JsonRpcRequest, sessionId: string): string | undefined {
    if (!this.sessions.has(sessionId)) return undefined;
    this.stats.lateRequestsRefused++;
    this.host.emit({ type: "late-request-refused", sessionId, id: request.id, method: request.method });
    return "its turn was already answered cancelled";
  }

  /** A prompt behind a turn still followed waits here, or is refused at once when that turn is stuck. */
  hold(job: RequestJob, request: JsonRpcRequest): boolean {
    const aftermath = this.of(job.payload.sessionId);
    if (aftermath === undefined) return false;
    if (aftermath.failed) {
      this.host.answer(job, this.stuckAnswer(aftermath, job.payload.id));
      return true;
    }
    aftermath.held.push({ job, request });
    this.stats.promptsHeld++;
    this.host.emit({ type: "prompt-held", sessionId: aftermath.sessionId, id: job.payload.id, behind: aftermath.promptId });
    return true;
  }

  release(job: RequestJob): boolean {
    const held = this.of(job.payload.sessionId)?.held ?? [];
    const index = held.findIndex((entry) => entry.job === job);
    if (index !== -1) held.splice(index, 1);
    return index !== -1;
  }

  private of(sessionId: string | undefined): Aftermath | undefined {
    return sessionId === undefined ? undefined : this.sessions.get(sessionId);
  }

  closed(): void {
    this.workGrace.clear();
    this.windows.clear();
    this.sessions.clear();
  }

  /** v2: the grace after `session/cancel` passed with the work not idle: tell the client, follow the agent's. */
  private workGivenUp(work: WorkJob): void {
    const { sessionId, promptId, startedAt } = work.payload;
    // Work that ended (or was replaced) settled and stopped its grace (`turnEnded`).
    if (work.isSettled) return;
    if (!this.host.isOpen("client") || !this.host.isOpen("agent")) return;
    const notice = this.host.rules().cancelledWorkEnd(sessionId);
    if (notice === undefined) return;
    this.host.emit({ type: "emulated", side: "client", what: "idle state_update for cancelled work the agent did not end" });
    this.host.notify("client", notice);
    if (!this.sessions.has(sessionId)) this.open(sessionId, promptId, startedAt);
  }

  private open(sessionId: string, promptId: JsonRpcId, startedAt: number | undefined): Aftermath {
    const now = this.host.now();
    const aftermath = new Aftermath(sessionId, promptId, startedAt ?? now, now);
    this.sessions.set(sessionId, aftermath);
    this.stats.turnsTracked++;
    this.windows.start(aftermath);
    this.host.emit({ type: "turn-outlives-answer", sessionId, id: promptId, windowMs: this.windows.graceMs });
    return aftermath;
  }

  /** The agent's turn in `sessionId` really ended: held prompts go to the agent now, in order. */
  private ended(sessionId: string, how: string): void {
    const aftermath = this.sessions.get(sessionId);
    if (aftermath === undefined) return;
    this.windows.stop(aftermath);
    this.sessions.delete(sessionId);
    this.host.emit({
      type: "turn-ended",
      sessionId,
      id: aftermath.promptId,
      how,
      afterMs: Math.round(this.host.now() - aftermath.answeredAt),
      suppressedUpdates: aftermath.suppressedUpdates,
    });
    for (const { job, request } of aftermath.held) {
      if (job.isRunning) this.host.forward(job, request);
    }
  }

  private windowPassed(aftermath: Aftermath): void {
    if (this.sessions.get(aftermath.sessionId) !== aftermath) return;
    aftermath.escalation++;
    this.stats.stuckEscalations++;
    const stuck = this.stuckOf(aftermath);
    const verdict = this.options.onStuck?.(stuck) ?? "fail";
    this.host.emit({ type: "turn-stuck", ...stuck, verdict });
    // The hook may have ended the turn or replaced the agent (restart).
    if (this.sessions.get(aftermath.sessionId) !== aftermath) return;
    if (verdict === "wait") {
      this.windows.start(aftermath);
      return;
    }
    aftermath.failed = true;
    for (const { job } of aftermath.held.splice(0)) {
      if (job.isRunning) this.host.answer(job, this.stuckAnswer(aftermath, job.payload.id));
    }
  }

  private stuckOf(aftermath: Aftermath): StuckTurn {
    const { sessionId, promptId, escalation, suppressedUpdates } = aftermath;
    const now = this.host.now();
    const stuckForMs = Math.round(now - aftermath.answeredAt);
    const turnAgeMs = Math.round(now - aftermath.turnStartedAt);
    return { sessionId, promptId, stuckForMs, turnAgeMs, escalation, suppressedUpdates, heldPrompts: aftermath.held.length };
  }

  /** The error a prompt gets when the turn before it is stuck: names the turn and how long. */
  private stuckAnswer(aftermath: Aftermath, id: JsonRpcId): JsonRpcResponse {
    const { sessionId, promptId, stuckForMs, turnAgeMs, suppressedUpdates } = this.stuckOf(aftermath);
    const message =
      `Session ${sessionId} is stuck: the agent has not ended its cancelled turn (prompt ${JSON.stringify(promptId)}) ` +
      `${stuckForMs} ms after it was answered cancelled (the turn began ${turnAgeMs} ms ago); this prompt was not sent to the agent`;
    const data = { reason: "turn-stuck", sessionId, stuckPromptId: promptId, stuckForMs, turnAgeMs, suppressedUpdates };
    return errorResponse(id, TURN_STUCK_ERROR_CODE, message, data);
  }
}
