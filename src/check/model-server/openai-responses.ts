/** OpenAI Responses, streamed (`POST /v1/responses`): codex-acp through a provider in $CODEX_HOME/config.toml. */
import type { ServerResponse } from "node:http";
import { type AnswerStream, beginSse, type Body, type Dialect, writeSse } from "./dialect.js";

export const openaiResponses: Dialect = {
  name: "openai-responses",
  serves: (path) => path.endsWith("/responses"),
  offeredTools: (body) => (Array.isArray(body.tools) ? (body.tools as Body[]).map((t) => String(t.name ?? "")) : []),
  carriesToolResult: (body) => JSON.stringify(body.input ?? []).includes('"function_call_output"'),
  quickAnswer(_path, _body, response) {
    const stream = this.stream(response);
    stream.begin();
    stream.finish("ok");
  },
  stream: (response) => new ResponsesStream(response),
};

class ResponsesStream implements AnswerStream {
  private textSoFar = "";
  private messageOpen = false;

  constructor(private readonly response: ServerResponse) {}

  /** Each event's data carries its own `type`. */
  private event(name: string, data: Body): void {
    writeSse(this.response, { type: name, ...data }, name);
  }

  begin(): void {
    beginSse(this.response);
    this.event("response.created", { response: { id: "resp_1", object: "response", status: "in_progress", output: [] } });
  }

  text(delta: string): void {
    if (!this.messageOpen) {
      this.messageOpen = true;
      this.event("response.output_item.added", {
        output_index: 0,
        item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] },
      });
    }
    this.textSoFar += delta;
    this.event("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta });
  }

  finish(text: string): void {
    this.text(text);
    this.event("response.output_item.done", {
      output_index: 0,
      item: {
        type: "message", id: "msg_1", role: "assistant", status: "completed",
        content: [{ type: "output_text", text: this.textSoFar, annotations: [] }],
      },
    });
    this.completed();
  }

  toolCall(name: string, args: Record<string, unknown>): void {
    const item = { type: "function_call", id: "fc_1", call_id: "call_1", name };
    this.event("response.output_item.added", { output_index: 0, item: { ...item, arguments: "", status: "in_progress" } });
    this.event("response.output_item.done", { output_index: 0, item: { ...item, arguments: JSON.stringify(args), status: "completed" } });
    this.completed();
  }

  /** `usage` is required: input, output and total tokens, the details null. */
  private completed(): void {
    this.event("response.completed", {
      response: {
        id: "resp_1", object: "response", status: "completed", output: [],
        usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 },
      },
    });
    this.response.end();
  }
}
