import type { JsonRpcMessage, JsonRpcRequest } from "../wire/index.js";

/** `--on-stuck restart`: the editor's `initialize`, replayed to a new agent under an id of ours (its answer stays here). */
export class InitializeReplay {
  private initialize: JsonRpcRequest | undefined;
  private replayId: string | undefined;
  private replays = 0;

  /** A message on its way to the agent: the editor's `initialize` is kept. */
  toAgent(message: JsonRpcMessage): void {
    if ((message as JsonRpcRequest).method === "initialize") this.initialize = message as JsonRpcRequest;
  }

  /** The `initialize` to send a restarted agent, if the editor sent one. */
  next(): JsonRpcRequest | undefined {
    if (this.initialize === undefined) return undefined;
    this.replayId = `acp-cancel/restart-${++this.replays}`;
    return { ...this.initialize, id: this.replayId };
  }

  /** True for the restarted agent's answer to the replayed `initialize`: it is not the editor's. */
  swallows(value: unknown): boolean {
    const message = value as { id?: unknown; method?: unknown } | null;
    if (this.replayId === undefined || message?.id !== this.replayId || message.method !== undefined) return false;
    this.replayId = undefined;
    return true;
  }
}
