import type { EngineEvent } from "../acp/index.js";
import type { JsonRpcId } from "../wire/index.js";

/** A prompt turn the editor cancelled, at the moment the agent really ended it. */
export interface EndedCancelledTurn {
  promptId: JsonRpcId;
  /** How long ago the editor sent the prompt (ms). */
  turnAgeMs: number;
  /** The agent's process (its group leader) when the turn ended. */
  agentPid: number | undefined;
}

/** Tells when a cancelled prompt really ends at the agent: its answer, or the engine's `turn-ended`. */
export class CancelledTurns {
  /** Prompts in flight at the agent, by id (ids are the editor's): when each was sent, whether it was cancelled. */
  private readonly turns = new Map<JsonRpcId, { began: number; cancelled: boolean }>();

  constructor(
    private readonly onEnded: (turn: EndedCancelledTurn) => void,
    private readonly agentPid: () => number | undefined,
  ) {}

  /** The editor sent a message: a prompt starts a turn. */
  fromEditor(message: unknown): void {
    const { method, id } = message as { method?: unknown; id?: JsonRpcId };
    if (method === "session/prompt" && id !== undefined) this.turns.set(id, { began: performance.now(), cancelled: false });
  }

  /** The agent sent a message: an answer ends its prompt's turn. */
  fromAgent(message: unknown): void {
    const value = message as { method?: unknown; id?: JsonRpcId };
    if (value.method === undefined && value.id !== undefined) this.end(value.id);
  }

  event(event: EngineEvent): void {
    if (event.type === "cancel" && event.side === "client" && event.method === "session/prompt") {
      const turn = this.turns.get(event.id);
      if (turn !== undefined) turn.cancelled = true;
    } else if (event.type === "turn-ended" && this.turns.get(event.id)?.cancelled === true) this.end(event.id);
  }

  /** The agent is gone or replaced: its turns ended with it, nothing is left to stop. */
  clear(): void {
    this.turns.clear();
  }

  private end(id: JsonRpcId): void {
    const turn = this.turns.get(id);
    this.turns.delete(id);
    if (turn?.cancelled !== true) return;
    this.onEnded({ promptId: id, turnAgeMs: performance.now() - turn.began, agentPid: this.agentPid() });
  }
}
