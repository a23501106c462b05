import type { EngineEvent, RequestJob, TurnPlugin } from "../acp/index.js";
import type { JsonRpcId, JsonRpcResponse } from "../wire/index.js";

/** A prompt turn the editor cancelled, at the moment the agent really ended it. */
export interface EndedCancelledTurn {
  promptId: JsonRpcId;
  /** How long ago the prompt went to the agent (ms). */
  turnAgeMs: number;
  /** The agent's process (its group leader) when the turn ended. */
  agentPid: number | undefined;
}

/** Tells when a cancelled prompt really ends at the agent: its answer, a late reply, or the engine's `turn-ended`. */
export class CancelledTurns implements TurnPlugin {
  /** Prompts in flight at the agent, by the editor's id: each job (its reason says it was cancelled), when sent. */
  private readonly turns = new Map<JsonRpcId, { job: RequestJob; began: number }>();

  constructor(
    private readonly onEnded: (turn: EndedCancelledTurn) => void,
    private readonly agentPid: () => number | undefined,
  ) {}

  promptSent(job: RequestJob): void {
    this.turns.set(job.payload.id, { job, began: performance.now() });
  }

  answered(job: RequestJob, _response: JsonRpcResponse, forPeer: boolean): void {
    if (!forPeer && job.payload.issuer === "client") this.end(job.payload.id);
  }

  /** The agent answered a prompt the engine had answered for it. */
  expectedReply(id: JsonRpcId): boolean {
    this.end(id);
    return false;
  }

  event(event: EngineEvent): void {
    if (event.type === "turn-ended") this.end(event.id);
  }

  /** The agent is gone or replaced: its turns ended with it, nothing is left to stop. */
  closed(): void {
    this.turns.clear();
  }

  private end(id: JsonRpcId): void {
    const turn = this.turns.get(id);
    if (turn === undefined) return;
    this.turns.delete(id);
    if (turn.job.reason === undefined) return;
    this.onEnded({ promptId: id, turnAgeMs: performance.now() - turn.began, agentPid: this.agentPid() });
  }
}
