import { descendantsOf, hasProcTable, type ProcessEntry, terminate, TICKS_PER_SECOND, turnsWork, uptimeTicks } from "../os/index.js";
import type { EngineEvent, RequestJob, TurnPlugin } from "../acp/index.js";
import { errorMessage } from "../core/error-message.js";
import type { JsonRpcId, JsonRpcResponse } from "../wire/index.js";
import { isToolCallUpdate, sessionIdOf } from "../wire/acp-shapes.js";
import type { Logger } from "./logger.js";
import type { TraceWriter } from "./trace-writer.js";

/** After a cancelled turn's answer, how long the agent has to stop its own tools before the bridge does. */
export const TURN_PROCESS_SETTLE_MS = 500;

/** A prompt turn the editor cancelled, at the moment the agent really ended it. */
export interface EndedCancelledTurn {
  promptId: JsonRpcId;
  /** How long ago the prompt went to the agent (ms). */
  turnAgeMs: number;
  /** The agent's process (its group leader) when the turn ended. */
  agentPid: number | undefined;
}

/** A prompt turn's span, in /proc ticks since boot. */
interface TurnSpan {
  /** The agent it ran in: a restarted agent's processes are never an old turn's. */
  readonly agent: number | undefined;
  readonly began: number;
  /** When its first `tool_call` was read: what the agent started before is its housekeeping. */
  toolCall: number | undefined;
  /** The agent's descendants when the prompt went out (pid:startTicks): never the turn's. */
  readonly before: ReadonlySet<string>;
  ended: number | undefined;
  cancelled: boolean;
  /** Answered `cancelled`, its processes not yet stopped. */
  stopping: boolean;
  /** Answered for the agent, whose own turn goes on (the engine follows it). */
  outliving: boolean;
}

/** What the plug-in reads of a request's job. */
type PromptJob = { readonly payload: Pick<RequestJob["payload"], "id" | "issuer" | "sessionId">; readonly reason?: RequestJob["reason"] };

/** One prompt turn at the agent. */
interface PromptTurn extends TurnSpan {
  /** Its reason says the editor cancelled it. */
  readonly job: PromptJob;
  /** When the prompt went out (performance.now()), for `turnAgeMs`. */
  readonly sent: number;
  /** `cancelledTurnEnded` waits for the turn's real end at the agent. */
  hookWaits: boolean;
  /** Its processes are followed: not with --keep-turn-processes, nor once pruned (the hook waits alone then). */
  watched: boolean;
}

const openSpan = (agent: number | undefined, began: number, before: ReadonlySet<string>): TurnSpan =>
  ({ agent, began, toolCall: undefined, before, ended: undefined, cancelled: false, stopping: false, outliving: false });

const identity = (entry: ProcessEntry) => `${entry.pid}:${entry.startTicks}`;

/** Ticks since boot from `began` to `ended` (undefined: still open); a request's `began` is set once a turn shares its time. */
interface Span {
  began: number | undefined;
  ended: number | undefined;
}

/** A turn whose processes may still be stopped: open, waiting to be stopped, or followed past its answer. */
const live = (turn: PromptTurn) => turn.watched && (turn.ended === undefined || turn.stopping || turn.outliving);

/**
 * Stops what a cancelled turn left running {@link TURN_PROCESS_SETTLE_MS} after its answer; for
 * `--on-stuck kill-tools`, a stuck turn's; at shutdown, those of the turns in flight. Which processes
 * are a turn's, and why: docs/decisions.md, "Processes a cancelled turn leaves running (bridge)". Linux only.
 * Tells `cancelledTurnEnded` when a cancelled prompt really ends at the agent (on every platform): its
 * own answer, a late reply, or the engine's `turn-ended`.
 */
export class TurnProcesses implements TurnPlugin {
  private readonly turns = new Map<string, PromptTurn>();
  /** The editor's other requests at the agent (session/new starts a session's MCP servers): what is born in one is no turn's. */
  private readonly requests = new Map<JsonRpcId, Span>();
  private readonly supported = hasProcTable();
  private toldUnsupported = false;

  constructor(
    /** The agent's pid now (it changes when the agent is restarted). */
    private readonly agentPid: () => number | undefined,
    private readonly killGraceMs: number,
    private readonly logger: Logger,
    private readonly trace: TraceWriter | undefined,
    /** False with --keep-turn-processes. */
    private readonly stopsCancelledTurns: boolean,
    private readonly cancelledTurnEnded?: (turn: EndedCancelledTurn) => void,
  ) {}

  promptSent(job: PromptJob): void {
    const watched = this.stopsCancelledTurns;
    const hookWaits = this.cancelledTurnEnded !== undefined;
    if (!watched && !hookWaits) return;
    // The processes before the turn are listed first, then the tick: one born during the walk is the turn's.
    const before = new Set(watched ? this.descendants().map(identity) : []);
    const span = openSpan(this.agentPid(), this.now(), before);
    // What ran before the prompt is in `before`; an open request's span matters only from here on.
    for (const request of this.requests.values()) request.began ??= span.began;
    this.turns.set(JSON.stringify(job.payload.id), { ...span, job, sent: performance.now(), hookWaits, watched });
  }

  requestSent(job: PromptJob): void {
    if (!this.stopsCancelledTurns || !this.supported) return;
    // No /proc read while no turn is followed (an editor's every request would pay for one).
    const began = this.turns.size === 0 ? undefined : this.now();
    this.requests.set(job.payload.id, { began, ended: undefined });
  }

  /** Hears every update (drops none): a session's first `tool_call` starts its open turn's tool time. */
  dropUpdate(params: unknown): boolean {
    if (this.turns.size === 0 || !isToolCallUpdate(params)) return false;
    const sessionId = sessionIdOf(params);
    for (const turn of this.turns.values()) {
      if (turn.watched && turn.job.payload.sessionId === sessionId && (turn.ended === undefined || turn.outliving))
        turn.toolCall ??= this.now();
    }
    return false;
  }

  answered(job: PromptJob, response: JsonRpcResponse, forPeer = false): void {
    const { id, issuer } = job.payload;
    if (issuer !== "client") return;
    if (!forPeer) this.end(id);
    // A request answered for the agent goes on there until its late reply.
    if (!forPeer && this.endRequest(id)) return;
    const turn = this.turns.get(JSON.stringify(id));
    if (id === null || turn?.watched !== true || turn.ended !== undefined) return;
    const result = "result" in response ? (response.result as { stopReason?: unknown } | null) : undefined;
    turn.ended = this.now();
    if (result?.stopReason !== "cancelled") return this.prune();
    if (!this.supported) {
      if (!this.toldUnsupported)
        this.logger.warn("cannot stop the processes of a cancelled turn on this platform (it needs Linux's /proc); they keep running");
      this.toldUnsupported = true;
      return this.prune();
    }
    turn.cancelled = true;
    turn.stopping = true;
    setTimeout(() => void this.stop(turn, id), TURN_PROCESS_SETTLE_MS).unref();
  }

  /** The agent answered a prompt the engine had answered for it. */
  expectedReply(id: JsonRpcId): boolean {
    this.end(id);
    this.endRequest(id);
    return false;
  }

  /**
   * The engine follows a prompt answered for the agent (`turn-outlives-answer`) until the agent really ends it; a
   * cancelled one's processes are stopped again then.
   */
  event(event: EngineEvent): void {
    if (event.type !== "turn-outlives-answer" && event.type !== "turn-ended") return;
    if (event.type === "turn-ended") this.end(event.id);
    const turn = this.turns.get(JSON.stringify(event.id));
    if (turn?.watched !== true) return;
    const endsCancelled = turn.outliving && turn.cancelled && event.type === "turn-ended";
    turn.outliving = event.type === "turn-outlives-answer";
    if (!endsCancelled) {
      if (!turn.outliving) this.prune();
      return;
    }
    // It worked on after its answer: what it started since is stopped too, once the agent has had its settle.
    turn.ended = this.now();
    turn.stopping = true;
    setTimeout(() => void this.stop(turn, event.id), TURN_PROCESS_SETTLE_MS).unref();
  }

  /** The agent is gone or replaced: its turns ended with it for the hook; their processes are still followed. */
  closed(): void {
    this.requests.clear();
    for (const [key, turn] of this.turns) {
      turn.hookWaits = false;
      if (!turn.watched) this.turns.delete(key);
    }
  }

  /** Whether `id` was one of the editor's other requests, now ended. */
  private endRequest(id: JsonRpcId): boolean {
    const request = this.requests.get(id); // an id is a string, a number or null: a key as it is
    if (request === undefined || request.ended !== undefined) return false;
    if (request.began === undefined) {
      this.requests.delete(id); // no turn ran meanwhile: nothing to tell apart
      return true;
    }
    request.ended = this.now();
    this.prune();
    return true;
  }

  private end(id: JsonRpcId): void {
    const key = JSON.stringify(id);
    const turn = this.turns.get(key);
    if (turn?.hookWaits !== true) return;
    turn.hookWaits = false;
    if (!turn.watched) this.turns.delete(key);
    if (turn.job.reason === undefined) return;
    try {
      this.cancelledTurnEnded?.({ promptId: id, turnAgeMs: performance.now() - turn.sent, agentPid: this.agentPid() });
    } catch (error) {
      // The embedder's hook: its failure must not cost the turn's process bookkeeping, nor reach the engine.
      this.logger.error(`the cancelledTurnEnded hook threw: ${errorMessage(error)}`);
    }
  }

  private now(): number {
    return this.supported ? uptimeTicks() : 0;
  }

  private async stop(turn: TurnSpan, promptId: unknown): Promise<void> {
    const targets = this.work(this.descendants(), turn);
    turn.stopping = false;
    this.prune();
    if (targets.length > 0) await this.stopAll(targets, `turn-processes: prompt ${JSON.stringify(promptId)} ended cancelled`);
  }

  private descendants(): ProcessEntry[] {
    const pid = this.supported ? this.agentPid() : undefined;
    return pid === undefined ? [] : descendantsOf(pid);
  }

  /** `--on-stuck kill-tools`: the stuck turn's work; a turn no longer known (v2 work) began `turnAgeMs` ago. */
  async stopStuck(promptId: unknown, turnAgeMs: number): Promise<void> {
    if (!this.supported) return;
    const known = this.turns.get(JSON.stringify(promptId));
    // Start times are in ticks: one born in the turn's first tick counts.
    const began = uptimeTicks() - Math.ceil((turnAgeMs * TICKS_PER_SECOND) / 1000) - 1;
    // Its updates were not followed: its tool time is taken to be all of it.
    const turn = known?.watched === true
      ? known
      : { ...openSpan(this.agentPid(), began, new Set()), toolCall: began, cancelled: true, outliving: true };
    // The stuck turn still runs: what it starts after its answer is its own too.
    const stuck: TurnSpan = { ...turn, ended: undefined };
    await this.stopAll(this.work(this.descendants(), stuck, turn), "kill-tools");
  }

  /**
   * The bridge is stopping: the turns in flight count as cancelled. Their processes are taken now,
   * before the agent goes and its tools lose their parent, and stopped once it exited or after `settleMs`.
   */
  async stopInFlight(agentExited: Promise<unknown>, settleMs = TURN_PROCESS_SETTLE_MS): Promise<void> {
    if (!this.supported) return;
    const inFlight = [...this.turns.values()].filter(live);
    if (inFlight.length === 0) return;
    for (const turn of inFlight) {
      turn.cancelled = true;
      turn.ended = undefined;
    }
    const descendants = this.descendants();
    const targets = [...new Set(inFlight.flatMap((turn) => this.work(descendants, turn)))];
    if (targets.length === 0) return;
    // The bridge's own timers are unref'd: this keeps it running until they are stopped.
    const holdOpen = setInterval(() => {}, 60_000);
    try {
      await Promise.race([agentExited, new Promise((resolve) => setTimeout(resolve, settleMs))]);
      await this.stopAll(targets, "turn-processes: shutdown with a turn in flight");
    } finally {
      clearInterval(holdOpen);
    }
  }

  /** SIGTERM, then SIGKILL after the kill grace; the pids go to the trace, the counts to the log. */
  private async stopAll(targets: ProcessEntry[], what: string): Promise<void> {
    const { terminated, killed } = await terminate(targets, { graceMs: this.killGraceMs });
    this.trace?.note(`${what}: SIGTERM ${JSON.stringify(terminated)}, SIGKILL ${JSON.stringify(killed)}`);
    this.logger.info(`${what}: stopped ${terminated.length} process(es) (SIGKILL to ${killed.length})`);
  }

  /**
   * `turn`'s work among `descendants` (turnsWork), not running at its prompt, none born during another turn not cancelled
   * nor during another editor request, nor below one born then (up to what ran at the prompt).
   */
  private work(descendants: ProcessEntry[], turn: TurnSpan, self: TurnSpan = turn): ProcessEntry[] {
    const agent = this.agentPid();
    if (agent === undefined || agent !== turn.agent) return [];
    const own = turnsWork(descendants, agent, { from: turn.began, to: turn.ended, toolCall: turn.toolCall });
    const during = (entry: ProcessEntry, span: Span) =>
      span.began !== undefined && entry.startTicks >= span.began && entry.startTicks <= (span.ended ?? Infinity);
    const others: Span[] = [...this.turns.values()].filter((other) => other.watched && other !== self && !other.cancelled);
    others.push(...this.requests.values());
    const byPid = new Map(descendants.map((entry) => [entry.pid, entry]));
    const othersWork = (entry: ProcessEntry): boolean => {
      for (let up = byPid.get(entry.pid); up !== undefined && !turn.before.has(identity(up)); up = byPid.get(up.ppid)) {
        const at = up;
        if (others.some((other) => during(at, other))) return true;
      }
      return false;
    };
    return descendants.filter((entry) => own(entry) && !turn.before.has(identity(entry)) && !othersWork(entry));
  }

  /** Stops following ended turns, but those live or overlapping one that is; forgets them unless the hook waits. */
  private prune(): void {
    let earliest = Infinity;
    for (const turn of this.turns.values()) if (live(turn)) earliest = Math.min(earliest, turn.began);
    for (const [key, turn] of this.turns) {
      if (!turn.watched || live(turn) || (turn.ended ?? Infinity) >= earliest) continue;
      if (turn.hookWaits) turn.watched = false;
      else this.turns.delete(key);
    }
    for (const [key, request] of this.requests) if ((request.ended ?? Infinity) < earliest) this.requests.delete(key);
  }
}
