import { descendantsOf, hasProcTable, type ProcessEntry, terminate, TICKS_PER_SECOND, uptimeTicks } from "../os/index.js";
import type { JsonRpcMessage } from "../wire/index.js";
import type { Logger } from "./logger.js";
import type { TraceWriter } from "./trace-writer.js";

/** After a cancelled turn's answer, how long the agent has to stop its own tools before the bridge does. */
export const TURN_PROCESS_SETTLE_MS = 500;

/** One prompt turn, in /proc ticks since boot. */
interface TurnSpan {
  readonly began: number;
  ended: number | undefined;
  /** Answered `cancelled`. */
  cancelled: boolean;
  /** Answered `cancelled`, its processes not yet stopped. */
  stopping: boolean;
}

/**
 * Stops what a cancelled turn left running (codex-acp keeps its tools on purpose): the agent's
 * descendants born during the turn, and during no other turn not cancelled, that still run
 * {@link TURN_PROCESS_SETTLE_MS} after the answer; for `--on-stuck kill-tools`, a stuck turn's.
 * Linux only. See docs/decisions.md, "Processes a cancelled turn leaves running (bridge)".
 */
export class TurnProcesses {
  private readonly turns = new Map<string, TurnSpan>();
  private readonly supported = hasProcTable();
  private toldUnsupported = false;

  constructor(
    /** The agent's pid now (it changes when the agent is restarted). */
    private readonly agentPid: () => number | undefined,
    private readonly killGraceMs: number,
    private readonly logger: Logger,
    private readonly trace: TraceWriter | undefined,
    /** False with --keep-turn-processes: a cancelled turn's processes are left alone. */
    private readonly stopsCancelledTurns: boolean,
  ) {}

  /** Looks at each message the bridge delivers: prompts to the agent, their answers to the editor. */
  see(to: "agent" | "client", message: JsonRpcMessage): void {
    const { id, method, result } = message as { id?: unknown; method?: unknown; result?: { stopReason?: unknown } };
    if (!this.stopsCancelledTurns || id === undefined || id === null) return;
    const key = JSON.stringify(id);
    if (to === "agent" && method === "session/prompt") {
      // Start times are rounded down to the tick: one tick earlier keeps a tool born at once.
      this.turns.set(key, { began: this.now() - 1, ended: undefined, cancelled: false, stopping: false });
      return;
    }
    if (to !== "client" || method !== undefined) return;
    const turn = this.turns.get(key);
    if (turn === undefined || turn.ended !== undefined) return;
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

  private now(): number {
    return this.supported ? uptimeTicks() : 0;
  }

  private async stop(turn: TurnSpan, promptId: unknown): Promise<void> {
    const pid = this.agentPid();
    const targets = pid === undefined ? [] : descendantsOf(pid).filter((entry) => this.bornIn(entry, turn));
    turn.stopping = false;
    this.prune();
    if (targets.length > 0) await this.stopAll(targets, `turn-processes: prompt ${JSON.stringify(promptId)} ended cancelled`);
  }

  /** `--on-stuck kill-tools`: stops the agent's descendants born during a stuck turn (`turnAgeMs` ago), whatever else ran. */
  async stopStuck(turnAgeMs: number): Promise<void> {
    const pid = this.agentPid();
    if (pid === undefined) return;
    // Start times are in ticks: one born in the turn's first tick counts.
    const turnBegan = uptimeTicks() - Math.ceil((turnAgeMs * TICKS_PER_SECOND) / 1000) - 1;
    await this.stopAll(descendantsOf(pid).filter((entry) => entry.startTicks >= turnBegan), "kill-tools");
  }

  /** SIGTERM, then SIGKILL after the kill grace; the pids go to the trace, the counts to the log. */
  private async stopAll(targets: ProcessEntry[], what: string): Promise<void> {
    const { terminated, killed } = await terminate(targets, { graceMs: this.killGraceMs });
    this.trace?.note(`${what}: SIGTERM ${JSON.stringify(terminated)}, SIGKILL ${JSON.stringify(killed)}`);
    this.logger.info(`${what}: stopped ${terminated.length} process(es) (SIGKILL to ${killed.length})`);
  }

  /** Born during `turn`, and during no other turn unless that one was cancelled too. */
  private bornIn(entry: ProcessEntry, turn: TurnSpan): boolean {
    const during = (span: TurnSpan) => entry.startTicks >= span.began && entry.startTicks <= (span.ended ?? Infinity);
    if (!during(turn)) return false;
    for (const other of this.turns.values()) if (other !== turn && !other.cancelled && during(other)) return false;
    return true;
  }

  /** Forgets ended turns, but those open, waiting to be stopped, or overlapping one that is. */
  private prune(): void {
    let earliest = Infinity;
    for (const span of this.turns.values()) {
      if (span.ended === undefined || span.stopping) earliest = Math.min(earliest, span.began);
    }
    for (const [key, span] of this.turns) {
      if (span.ended !== undefined && !span.stopping && span.ended < earliest) this.turns.delete(key);
    }
  }
}
