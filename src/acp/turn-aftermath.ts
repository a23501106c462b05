import type { AnyJob } from "../core/index.js";
import { errorResponse, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../wire/index.js";
import {
  type AftermathStats,
  DEFAULT_GRACE_MS,
  DEFAULT_TURN_END_WINDOW_MS,
  TURN_STUCK_ERROR_CODE,
  type TurnEndOptions,
} from "./engine-options.js";
import type { EngineHost, EnginePlugin } from "./engine-plugin.js";
import type { StuckTurn } from "./events.js";
import { sessionIdOf } from "./methods.js";
import type { RequestJob } from "./request-record.js";
import { isWorkJob, type WorkJob } from "./session-work.js";

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
 * The aftermath of cancelled turns the agent did not end in time: an engine plug-in, on
 * when the engine is given `turnEnd`. The engine answers such a turn for the agent after
 * the grace period; the agent's own turn goes on. Until it really ends (v1: the agent's
 * late answer to the prompt; v2: its idle `state_update`), the session's updates are not
 * forwarded, the agent's requests are answered cancelled at once, and new prompts for the
 * session wait behind a barrier, bounded by a window and an escalation hook.
 *
 * Sessions without an aftermath cost the engine one size check per hook it calls.
 */
export class TurnAftermath implements EnginePlugin {
  private readonly sessions = new Map<string, Aftermath>();
  /** Stuck prompt ids (client's id space) → session, to recognise the agent's late answer. */
  private readonly byPrompt = new Map<JsonRpcId, string>();
  /** When each prompt went to the agent. */
  private readonly started = new WeakMap<RequestJob, number>();
  /** Cancelled foreground work (v2) the agent has a grace to end before the engine gives up on it. */
  private readonly workGrace = new Map<WorkJob, ReturnType<typeof setTimeout>>();
  private readonly windowMs: number;
  private readonly graceMs: number;
  readonly stats: AftermathStats = {
    turnsTracked: 0,
    lateUpdatesSuppressed: 0,
    lateRequestsRefused: 0,
    promptsHeld: 0,
    stuckEscalations: 0,
  };

  constructor(
    private readonly host: EngineHost,
    private readonly options: TurnEndOptions,
    graceMs: number = DEFAULT_GRACE_MS,
  ) {
    this.windowMs = options.windowMs ?? DEFAULT_TURN_END_WINDOW_MS;
    this.graceMs = graceMs;
  }

  // ---- the engine's hooks -------------------------------------------------------------

  turnStarted(job: RequestJob): void {
    this.started.set(job, this.host.now());
  }

  /** v1: the engine answered the cancelled prompt `job` for the agent: track the agent's own turn. */
  turnAnswered(job: RequestJob): void {
    const { sessionId, id } = job.payload;
    if (sessionId === undefined || this.host.rules().realTurnEnd !== "prompt-answer") return;
    if (!this.host.isOpen("agent") || !this.host.isOpen("client")) return;
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

  /** v2: cancelled foreground work has no answer to give: a grace of its own bounds it. */
  turnCancelled(turn: AnyJob): void {
    if (!isWorkJob(turn) || this.workGrace.has(turn)) return;
    const timer = setTimeout(() => this.workGivenUp(turn), this.graceMs);
    timer.unref?.();
    this.workGrace.set(turn, timer);
  }

  turnEnded(turn: AnyJob): void {
    if (!isWorkJob(turn)) return;
    clearTimeout(this.workGrace.get(turn));
    this.workGrace.delete(turn);
  }

  /** v1: an answer from the agent to a prompt already answered for it. True when it was one. */
  lateReply(id: JsonRpcId): boolean {
    if (this.byPrompt.size === 0) return false;
    const sessionId = this.byPrompt.get(id);
    if (sessionId === undefined) return false;
    this.byPrompt.delete(id);
    const aftermath = this.sessions.get(sessionId);
    aftermath?.open.delete(id);
    if (aftermath?.open.size === 0) this.ended(sessionId, "the agent's late answer to the prompt");
    return true;
  }

  /**
   * A `session/update` from the agent: true when it belongs to a turn already answered (drop
   * it). An update that really ends such a turn (v2: the idle `state_update`) ends it, and is
   * not forwarded either: the client already had the engine's idle for it.
   */
  suppresses(params: unknown): boolean {
    if (this.sessions.size === 0) return false;
    const sessionId = sessionIdOf(params);
    const aftermath = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (aftermath === undefined) return false;
    if (this.host.rules().workChange(params) === "end") {
      this.host.endWork(aftermath.sessionId);
      this.ended(aftermath.sessionId, "the idle state_update");
      return true;
    }
    aftermath.suppressed++;
    this.stats.lateUpdatesSuppressed++;
    this.host.emit({ type: "late-update-suppressed", sessionId: aftermath.sessionId, count: aftermath.suppressed });
    return true;
  }

  /** An agent request of a session whose turn was answered: a turn the client was told is over never shows it. */
  refuses(request: JsonRpcRequest, sessionId: string): string | undefined {
    if (!this.sessions.has(sessionId)) return undefined;
    this.stats.lateRequestsRefused++;
    this.host.emit({ type: "late-request-refused", sessionId, id: request.id, method: request.method });
    return "its turn was already answered cancelled";
  }

  /** A client prompt for `job`'s session: true when it waits (or was refused) instead of going on. */
  holds(job: RequestJob, request: JsonRpcRequest): boolean {
    if (this.sessions.size === 0) return false;
    const sessionId = job.payload.sessionId;
    const aftermath = sessionId === undefined ? undefined : this.sessions.get(sessionId);
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

  /** A held prompt was cancelled before it went anywhere. True when it was held here. */
  released(job: RequestJob): boolean {
    const sessionId = job.payload.sessionId;
    const aftermath = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (aftermath === undefined) return false;
    const index = aftermath.held.findIndex((held) => held.job === job);
    if (index === -1) return false;
    aftermath.held.splice(index, 1);
    return true;
  }

  /** The agent side is gone or replaced: nothing more will end these turns. */
  sideClosed(): void {
    for (const timer of this.workGrace.values()) clearTimeout(timer);
    this.workGrace.clear();
    for (const aftermath of this.sessions.values()) clearTimeout(aftermath.timer);
    this.sessions.clear();
    this.byPrompt.clear();
  }

  // ---- following a turn to its real end ----------------------------------------------

  /**
   * v2: the grace after `session/cancel` passed and the agent has not reported the work
   * idle: the client is told it is (the version's notice), and the agent's own work is
   * followed to its real end (its idle `state_update`).
   */
  private workGivenUp(work: WorkJob): void {
    this.workGrace.delete(work);
    const { sessionId, promptId, startedAt } = work.payload;
    if (work.isSettled || this.host.turnOf(sessionId) !== work) return;
    if (!this.host.isOpen("client") || !this.host.isOpen("agent")) return;
    const notice = this.host.rules().cancelledWorkEnd(sessionId);
    if (notice === undefined) return;
    this.host.emit({ type: "emulated", side: "client", what: "idle state_update for cancelled work the agent did not end" });
    this.host.notify("client", notice);
    if (!this.sessions.has(sessionId)) this.open(sessionId, promptId, startedAt);
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
  private ended(sessionId: string, how: string): void {
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
    const verdict = this.options.onStuck?.(stuck) ?? "fail";
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
      if (job.isRunning) this.host.answer(job, this.stuckAnswer(aftermath, job.payload.id));
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
