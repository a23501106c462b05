import { type AnyJob, Job, settleJob } from "../core/index.js";
import type { JsonRpcId } from "../wire/index.js";
import { Method } from "./methods.js";
import { isRequestJob, isWorkJob, type RequestJob, SessionWork } from "./engine-jobs.js";
import type { EngineHost, TurnPlugin } from "./turn-plugin.js";
import type { WorkChange } from "./versions/index.js";

/**
 * The running turn of each session: its prompt (v1), or its foreground work (v2). A turn is
 * the parent of the agent's requests of its session, and what `session/cancel` cancels.
 */
export class SessionTurns {
  private readonly turns = new Map<string, AnyJob>();
  /** v2: sessions whose work went idle listing background work (a `session/cancel` may be meant for it). */
  private readonly background = new Set<string>();

  constructor(
    private readonly host: EngineHost,
    private readonly plugins: readonly TurnPlugin[],
  ) {}

  /** A prompt is the turn itself (v1), or opens the session's foreground work when none is open (v2). */
  start(sessionId: string, prompt: RequestJob): void {
    const rules = this.host.rules();
    if (rules.promptIsTurn) this.turns.set(sessionId, prompt);
    else if (!rules.passThrough) this.workChange(sessionId, "start", undefined, prompt.payload.id);
  }

  /** The turn an agent request of `sessionId` belongs to; background work (v2) belongs to none. */
  parentOf(method: string, params: unknown, sessionId: string): AnyJob | undefined {
    const turn = this.turns.get(sessionId);
    return isWorkJob(turn) && this.host.rules().forBackground(method, params, turn.payload) ? undefined : turn;
  }

  /** Starts foreground work unless some is open (a cancelled one's updates are still its own), or ends it. */
  workChange(sessionId: string | undefined, change: WorkChange, params?: unknown, promptId: JsonRpcId = null): void {
    if (sessionId === undefined) return;
    let open = this.turns.get(sessionId);
    if (change === "start") {
      if (open === undefined || open.isSettled) {
        open = new Job(new SessionWork(sessionId, promptId, this.host.now()));
        this.turns.set(sessionId, open);
      }
      if (params !== undefined && isWorkJob(open)) open.payload.snapshot = (params as { update?: unknown }).update;
      return;
    }
    if (open !== undefined) for (const plugin of this.plugins) plugin.turnEnded?.(open);
    if (open !== undefined) settleJob(open);
    this.turns.delete(sessionId);
    if (params === undefined) return;
    const background = (params as { update?: { background?: unknown } }).update?.background;
    if (Array.isArray(background) && background.length > 0) this.background.add(sessionId);
    else this.background.delete(sessionId);
  }

  /** No turn of `sessionId` runs: none open, no background work listed (v2), none a plug-in still follows. */
  isIdle(sessionId: string): boolean {
    if (this.turns.get(sessionId)?.isSettled === false || this.background.has(sessionId)) return false;
    return !this.plugins.some((plugin) => plugin.follows?.(sessionId) === true);
  }

  /** `session/cancel` or `session/close`: the session's turn and everything of the session hanging under no turn. */
  cancelSession(sessionId: string): void {
    const { host } = this;
    const turn = this.turns.get(sessionId);
    if (turn?.isRunning) {
      host.cancel(turn, "session");
      for (const plugin of this.plugins) plugin.turnCancelled?.(turn);
    }
    // v2: the session's unanswered prompts. v1: its agent requests under no turn (permission dialogs).
    const stray = host.rules().promptIsTurn
      ? host.running("agent", (job) => job.payload.sessionId === sessionId && (!isRequestJob(job.parent) || job.parent.isSettled))
      : host.running("client", (job) => job.payload.method === Method.prompt && job.payload.sessionId === sessionId);
    for (const job of stray) if (job.isRunning) host.cancel(job, "session");
  }

  /** v2: an error answer to `prompt` means its message was never inserted: work it opened and that never ran ends quietly. */
  promptRefused(sessionId: string, prompt: RequestJob): void {
    const open = this.turns.get(sessionId);
    if (isWorkJob(open) && open.payload.promptId === prompt.payload.id && open.payload.snapshot === undefined) {
      this.workChange(sessionId, "end");
    }
  }

  /** The session's turn: its prompt until answered (v1), or its foreground work until idle (v2). */
  turnOf(sessionId: string): AnyJob | undefined {
    return this.turns.get(sessionId);
  }

  /** A prompt was answered: if it was its session's turn (v1), the turn is over. */
  promptAnswered(sessionId: string, prompt: RequestJob): void {
    if (this.turns.get(sessionId) === prompt) this.turns.delete(sessionId);
  }

  /** A side is gone: no turn runs any more. */
  clear(): void {
    for (const turn of this.turns.values()) for (const plugin of this.plugins) plugin.turnEnded?.(turn);
    this.turns.clear();
    this.background.clear();
  }
}
