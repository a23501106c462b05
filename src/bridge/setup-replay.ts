import type { JsonRpcMessage, JsonRpcRequest } from "../wire/index.js";

/** The requests that sign a connection in (v1's `authenticate`, the v2 draft's `auth/login`) or out (v2 `auth/logout`). */
const SIGN_IN_METHODS = new Set(["authenticate", "auth/login", "auth/logout"]);

/**
 * `--on-stuck restart`: how the editor set the old agent up, replayed to the new one under ids of ours (their answers
 * stay here). The editor's `initialize`, then the last sign-in the old agent accepted: without it an agent that asks
 * for one (codex-acp's API key, gemini-cli, qwen-code) refuses the editor's next `session/new`. Each request waits for
 * the answer to the one before, as an editor's would; the editor's own messages wait for the last.
 */
export class SetupReplay {
  private initialize: JsonRpcRequest | undefined;
  /** The editor's sign-in (or out) on its way, and the last sign-in the agent answered with a result. */
  private signingIn: JsonRpcRequest | undefined;
  private signedIn: JsonRpcRequest | undefined;
  private queue: JsonRpcRequest[] = [];
  private replayId: string | undefined;
  private replays = 0;
  private send: (request: JsonRpcRequest) => void = () => {};
  private done: (() => void) | undefined;

  /** A message on its way to the agent: the editor's `initialize` and sign-in are kept. */
  toAgent(message: JsonRpcMessage): void {
    const { method } = message as { method?: unknown };
    if (method === "initialize") this.initialize = message as JsonRpcRequest;
    else if (typeof method === "string" && SIGN_IN_METHODS.has(method)) this.signingIn = message as JsonRpcRequest;
  }

  /** Sends the setup to a new agent, one request at a time; `done` once the last is answered (at once if none). */
  replay(send: (request: JsonRpcRequest) => void, done: () => void): void {
    this.queue = [this.initialize, this.signedIn].filter((request) => request !== undefined);
    this.send = send;
    this.done = done;
    this.next();
  }

  /** A message from the agent: true for an answer to a replayed request, which is not the editor's. */
  fromAgent(value: unknown): boolean {
    if (typeof value !== "object" || value === null || "method" in value) return false;
    const { id } = value as { id?: unknown };
    if (this.signingIn !== undefined && id === this.signingIn.id) {
      if ("result" in value) this.signedIn = this.signingIn.method === "auth/logout" ? undefined : this.signingIn;
      this.signingIn = undefined;
    }
    if (this.replayId === undefined || id !== this.replayId) return false;
    this.next();
    return true;
  }

  private next(): void {
    const request = this.queue.shift();
    if (request === undefined) {
      this.replayId = undefined;
      const done = this.done;
      this.done = undefined;
      done?.();
      return;
    }
    this.replayId = `acp-cancel/restart-${++this.replays}`;
    this.send({ ...request, id: this.replayId });
  }
}
