import { descendantsOf, hasProcTable, type ProcessEntry, terminate, TICKS_PER_SECOND, turnsWork, uptimeTicks } from "../os/index.js";
import type { EngineEvent, RequestJob, TurnPlugin } from "../acp/index.js";
import type { JsonRpcResponse } from "../wire/index.js";
import { isToolCallUpdate, sessionIdOf } from "../wire/acp-shapes.js";
import type { Logger } from "./logger.js";
import type { TraceWriter } from "./trace-writer.js";

/** After a cancelled turn's answer, how long the agent has to stop its own tools before the bridge does. */
export const TURN_PROCESS_SETTLE_MS = 500;

/** One prompt turn, in /proc ticks since boot. */
interface TurnSpan {
  readonly sessionId: string | undefined;
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

const openTurn = (sessionId: string | undefined, began: number, before: ReadonlySet<string>): TurnSpan =>
  ({ sessionId, began, toolCall: undefined, before, ended: undefined, cancelled: false, stopping: false, outliving: false });

const identity = (entry: ProcessEntry) => `${entry.pid}:${entry.startTicks}`;

/** A turn whose processes may still be stopped: open, waiting to be stopped, or followed past its answer. */
const live = (turn: TurnSpan) => turn.ended === undefined || turn.stopping || turn.outliving;

/** What the plug-in reads of a request's job. */
type PromptJob = { readonly payload: Pick<RequestJob["payload"], "id" | "issuer" | "sessionId"> };

/**
 * Stops what a cancelled turn left running {@link TURN_PROCESS_SETTLE_MS} after its answer; for
 * `--on-stuck kill-tools`, a stuck turn's; at shutdown, those of the turns in flight. Which processes
 * are a turn's, and why: docs/decisions.md, "Processes a cancelled turn leaves running (bridge)". Linux only.
 */
export class TurnProcesses implements TurnPlugin {
  private readonly turns = new Map<string, TurnSpan>();
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
  ) {}

  promptSent(job: PromptJob): void {
    if (!this.stopsCancelledTurns) return;
    const before = new Set(this.descendants().map(identity));
    this.turns.set(JSON.stringify(job.payload.id), openTurn(job.payload.sessionId, this.now(), before));
  }

  /** Hears every update (drops none): a session's first `tool_call` starts its open turn's tool time. */
  dropUpdate(params: unknown): boolean {
    if (this.turns.size === 0 || !isToolCallUpdate(params)) return false;
    const sessionId = sessionIdOf(params);
    for (const turn of this.turns.values()) {
      if (turn.sessionId === sessionId && (turn.ended === undefined || turn.outliving)) turn.toolCall ??= this.now();
    }
    return false;
  }

  answered(job: PromptJob, response: JsonRpcResponse): void {
    const { id, issuer } = job.payload;
    if (!this.stopsCancelledTurns || issuer !== "client" || id === null) return;
    const turn = this.turns.get(JSON.stringify(id));
    if (turn === undefined || turn.ended !== undefined) return;
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

  /** The engine follows a prompt answered for the agent (`turn-outlives-answer`) until the agent really ends it. */
  event(event: EngineEvent): void {
    if (event.type !== "turn-outlives-answer" && event.type !== "turn-ended") return;
    const turn = this.turns.get(JSON.stringify(event.id));
    if (turn === undefined) return;
    turn.outliving = event.type === "turn-outlives-answer";
    if (!turn.outliving) this.prune();
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
    const turn = known ?? { ...openTurn(undefined, began, new Set()), toolCall: began, cancelled: true, outliving: true };
    // The stuck turn still runs: what it starts after its answer is its own too.
    const stuck: TurnSpan = { ...turn, ended: undefined };
    await this.stopAll(this.work(this.descendants(), stuck, turn), "kill-tools");
  }

  /**
   * The bridge is stopping: the turns in flight count as cancelled. Their processes are taken now,
   * before the agent goes and its tools lose their parent, and stopped once it exited or after `settleMs`.
   */
  async stopInFlight(agentExited: Promise<unknown>, settleMs = TURN_PROCESS_SETTLE_MS): Promise<void> {
    if (!this.supported || !this.stopsCancelledTurns) return;
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

  /** `turn`'s work among `descendants` (turnsWork), not running at its prompt, none born during another turn not cancelled. */
  private work(descendants: ProcessEntry[], turn: TurnSpan, self: TurnSpan = turn): ProcessEntry[] {
    const agent = this.agentPid();
    if (agent === undefined) return [];
    const own = turnsWork(descendants, agent, { from: turn.began, to: turn.ended, toolCall: turn.toolCall });
    const during = (entry: ProcessEntry, span: TurnSpan) =>
      entry.startTicks >= span.began && entry.startTicks <= (span.ended ?? Infinity);
    const others = [...this.turns.values()].filter((other) => other !== self && !other.cancelled);
    return descendants.filter((entry) =>
      own(entry) && !turn.before.has(identity(entry)) && !others.some((other) => during(entry, other)));
  }

  /** Forgets ended turns, but those live or overlapping one that is. */
  private prune(): void {
    let earliest = Infinity;
    for (const span of this.turns.values()) if (live(span)) earliest = Math.min(earliest, span.began);
    for (const [key, span] of this.turns) {
      if (!live(span) && (span.ended ?? Infinity) < earliest) this.turns.delete(key);
    }
  }
}
