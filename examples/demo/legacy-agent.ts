/**
 * The demo's agent: built on @agentclientprotocol/sdk 0.28.1, a release from before
 * `$/cancel_request`. It ends a turn only when it receives `session/cancel`, like many
 * agents in use today.
 */
import { Readable, Writable } from "node:stream";
import * as legacy from "acp-sdk-legacy";

class DemoAgent implements legacy.Agent {
  private readonly turns = new Map<string, AbortController>();

  constructor(private readonly connection: legacy.AgentSideConnection) {}

  async initialize(): Promise<legacy.InitializeResponse> {
    return { protocolVersion: legacy.PROTOCOL_VERSION, agentCapabilities: {} };
  }

  async newSession(): Promise<legacy.NewSessionResponse> {
    return { sessionId: "demo-session" };
  }

  async authenticate(): Promise<void> {}

  async prompt(params: legacy.PromptRequest): Promise<legacy.PromptResponse> {
    const turn = new AbortController();
    this.turns.set(params.sessionId, turn);
    // The model wants to edit a file: ask the user first.
    const permission = await this.connection.requestPermission({
      sessionId: params.sessionId,
      toolCall: { toolCallId: "edit-1", title: "Edit src/main.ts" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    if (permission.outcome.outcome === "cancelled" || turn.signal.aborted) return { stopReason: "cancelled" };
    return { stopReason: "end_turn" };
  }

  async cancel(params: legacy.CancelNotification): Promise<void> {
    this.turns.get(params.sessionId)?.abort();
  }
}

const stream = legacy.ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
);
const connection = new legacy.AgentSideConnection((conn) => new DemoAgent(conn), stream);
void connection.closed.then(() => process.exit(0));
