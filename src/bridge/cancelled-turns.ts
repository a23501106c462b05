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
  /** Prompts in flight at the agent: when each was sent, by id (ids are the editor's). */
  private readonly started = new Map<JsonRpcId, number>();
  private readonly cancelled = new Set<JsonRpcId>();

  constructor(
    private readonly onEnded: (turn: EndedCancelledTurn) => void,
    private readonly agentPid: () => number | undefined,
  ) {}

  /** The editor sent a message: a prompt starts a turn. */
  fromEditor(message: unknown): void {
    const { method, id } = message as { method?: unknown; id?: JsonRpcId };
    if (method === "session/prompt" && id !== undefined) this.started.set(id, performance.now());
  }

  /** The agent sent a message: an answer to a cancelled prompt ends its turn. */
  fromAgent(message: unknown): void {
    const value = message as { method?: unknown; id?: JsonRpcId };
    if (value.method !== undefined || value.id === undefined) return;
    if (this.cancelled.has(value.id)) this.end(value.id);
    this.started.delete(value.id);
  }

  event(event: EngineEvent): void {
    if (event.type === "cancel" && event.side === "client" && event.method === "session/prompt") {
      if (this.started.has(event.id)) this.cancelled.add(event.id);
    } else if (event.type === "turn-ended" && this.cancelled.has(event.id)) {
      this.end(event.id);
      this.started.delete(event.id);
    }
  }

  /** The agent is gone or replaced: its turns ended with it, nothing is left to stop. */
  clear(): void {
    this.started.clear();
    this.cancelled.clear();
  }

  private end(id: JsonRpcId): void {
    this.cancelled.delete(id);
    const began = this.started.get(id) ?? performance.now();
    this.onEnded({ promptId: id, turnAgeMs: performance.now() - began, agentPid: this.agentPid() });
  }
}
