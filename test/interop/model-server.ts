/**
 * A scripted model on loopback: a real HTTP server that speaks the two wire formats the real
 * agents use — OpenAI Responses SSE (codex-acp, through a provider in $CODEX_HOME/config.toml)
 * and Anthropic Messages SSE (claude-agent-acp, through ANTHROPIC_BASE_URL). It stands in for
 * the remote model as a local S3 stands in for S3; nothing of acp-cancel is in it. It records
 * every turn request and the moment the agent closed it (the agent "stopped its upstream").
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What the model does with a turn request (one that offers tools; anything else — titles,
 * token counts — gets a short well-formed answer):
 * - `hold`: streams text and never completes, until the agent closes the request;
 * - `finish`: streams `text` and completes;
 * - `shell`: calls the agent's shell tool with `command`; the request that carries the tool's
 *   result is answered as `then` says (`finish` with `text`, or `hold`). codex's `exec_command`
 *   is asked to yield after 250 ms: a command still running then goes on in the background
 *   while the model is asked again (a long build the model watches);
 * - `slow`: sends nothing for `delayMs`, then behaves as `hold`.
 */
export type Script =
  | { kind: "hold" }
  | { kind: "finish"; text: string }
  | { kind: "shell"; command: string; text: string; then?: "finish" | "hold" }
  | { kind: "slow"; delayMs: number };

export interface TurnRequest {
  readonly api: "openai" | "anthropic";
  readonly body: Record<string, unknown>;
  readonly openedAt: number;
  /** When the agent closed the request before the model finished (undefined: open, or finished). */
  closedByAgentAt: number | undefined;
  finished: boolean;
  /** The tool the model called in it, if any. */
  toolCalled?: string;
}

type Body = Record<string, unknown>;
const HOLD_TICK_MS = 300;

export class ModelServer {
  script: Script = { kind: "finish", text: "hello from the scripted model" };
  readonly turns: TurnRequest[] = [];
  port = 0;
  private readonly server = createServer((request, response) => void this.handle(request, response));
  private readonly open = new Set<ServerResponse>();

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Turn requests still streaming (neither finished nor closed by the agent). */
  get streaming(): TurnRequest[] {
    return this.turns.filter((t) => !t.finished && t.closedByAgentAt === undefined);
  }

  async stop(): Promise<void> {
    for (const response of this.open) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body: Body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as Body;
    } catch {
      return void response.writeHead(400).end();
    }
    const path = (request.url ?? "").split("?")[0] ?? "";
    if (path.endsWith("/count_tokens")) return json(response, { input_tokens: 1 });
    const api = path.endsWith("/responses") ? "openai" : path.endsWith("/messages") ? "anthropic" : undefined;
    if (api === undefined) return void response.writeHead(404).end();
    const tools = body.tools;
    if (!Array.isArray(tools) || tools.length === 0) return this.quickAnswer(api, body, response);
    const turn: TurnRequest = { api, body, openedAt: Date.now(), closedByAgentAt: undefined, finished: false };
    this.turns.push(turn);
    this.open.add(response);
    response.on("close", () => {
      this.open.delete(response);
      if (!turn.finished) turn.closedByAgentAt = Date.now();
    });
    const script = this.script;
    const sse = new Sse(api, response);
    if (script.kind === "slow") await sleep(script.delayMs);
    if (response.destroyed) return;
    sse.begin();
    const holds = script.kind === "hold" || script.kind === "slow" ||
      (script.kind === "shell" && script.then === "hold" && carriesToolResult(api, body));
    if (holds) {
      for (let i = 0; !response.destroyed; i++) {
        sse.text(i === 0 ? "working" : ".");
        await sleep(HOLD_TICK_MS);
      }
      return;
    }
    if (script.kind === "shell" && !carriesToolResult(api, body)) {
      turn.toolCalled = sse.shellCall(tools as Body[], script.command);
    } else sse.finishText(script.text);
    turn.finished = true;
    response.end();
  }

  /** Titles, summaries and the like: a short, complete answer in the request's own shape. */
  private quickAnswer(api: "openai" | "anthropic", body: Body, response: ServerResponse): void {
    if (body.stream !== true && api === "anthropic") {
      return json(response, {
        id: "msg_quick",
        type: "message",
        role: "assistant",
        model: body.model ?? "scripted",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    }
    const sse = new Sse(api, response);
    sse.begin();
    sse.finishText("ok");
    response.end();
  }
}

/** Did this request carry a tool's result (the second request of a tool call)? */
function carriesToolResult(api: "openai" | "anthropic", body: Body): boolean {
  if (api === "openai") return JSON.stringify(body.input ?? []).includes('"function_call_output"');
  const messages = (body.messages ?? []) as { content?: unknown }[];
  return JSON.stringify(messages.at(-1)?.content ?? "").includes('"tool_result"');
}

/** One streamed answer in either format. */
class Sse {
  private textSoFar = "";
  private blockOpen = false;

  constructor(
    private readonly api: "openai" | "anthropic",
    private readonly response: ServerResponse,
  ) {}

  private event(name: string, data: Body): void {
    if (this.response.destroyed) return;
    this.response.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
  }

  begin(): void {
    this.response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (this.api === "openai") {
      this.event("response.created", { response: { id: "resp_1", object: "response", status: "in_progress", output: [] } });
    } else {
      this.event("message_start", {
        message: {
          id: "msg_1", type: "message", role: "assistant", model: "scripted", content: [],
          stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 },
        },
      });
    }
  }

  text(delta: string): void {
    if (!this.blockOpen) {
      this.blockOpen = true;
      if (this.api === "openai") {
        this.event("response.output_item.added", {
          output_index: 0,
          item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] },
        });
      } else this.event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    }
    this.textSoFar += delta;
    if (this.api === "openai") {
      this.event("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta });
    } else this.event("content_block_delta", { index: 0, delta: { type: "text_delta", text: delta } });
  }

  finishText(text: string): void {
    this.text(text);
    if (this.api === "openai") {
      this.event("response.output_item.done", {
        output_index: 0,
        item: {
          type: "message", id: "msg_1", role: "assistant", status: "completed",
          content: [{ type: "output_text", text: this.textSoFar, annotations: [] }],
        },
      });
      this.completed();
    } else {
      this.event("content_block_stop", { index: 0 });
      this.stopMessage("end_turn");
    }
  }

  /** Calls the agent's shell tool, whichever it offers; returns its name. */
  shellCall(tools: Body[], command: string): string {
    if (this.api === "anthropic") {
      this.event("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "Bash", input: {} } });
      this.event("content_block_delta", {
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify({ command, description: "Run the command" }) },
      });
      this.event("content_block_stop", { index: 0 });
      this.stopMessage("tool_use");
      return "Bash";
    }
    const offered = new Set(tools.map((t) => String(t.name ?? "")));
    const [name, args] = offered.has("exec_command")
      ? ["exec_command", { cmd: command, yield_time_ms: 250 }]
      : offered.has("shell_command")
        ? ["shell_command", { command }]
        : ["shell", { command: ["sh", "-c", command] }];
    this.event("response.output_item.added", {
      output_index: 0,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name, arguments: "", status: "in_progress" },
    });
    this.event("response.output_item.done", {
      output_index: 0,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name, arguments: JSON.stringify(args), status: "completed" },
    });
    this.completed();
    return name;
  }

  private completed(): void {
    this.event("response.completed", {
      response: {
        id: "resp_1", object: "response", status: "completed", output: [],
        usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 },
      },
    });
  }

  private stopMessage(reason: string): void {
    this.event("message_delta", { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 1 } });
    this.event("message_stop", {});
  }
}

function json(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
