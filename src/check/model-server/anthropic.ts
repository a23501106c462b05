/**
 * Anthropic Messages, streamed (`POST /v1/messages`, `stream: true`): claude-agent-acp through
 * ANTHROPIC_BASE_URL, and opencode through its anthropic provider's `baseURL`.
 */
import type { ServerResponse } from "node:http";
import { type AnswerStream, beginSse, type Body, type Dialect, sendJson, writeSse } from "./dialect.js";

export const anthropic: Dialect = {
  name: "anthropic",
  serves: (path) => path.endsWith("/messages") || path.endsWith("/count_tokens"),
  offeredTools: (body) => (Array.isArray(body.tools) ? (body.tools as Body[]).map((t) => String(t.name ?? "")) : []),
  carriesToolResult(body) {
    const messages = (Array.isArray(body.messages) ? body.messages : []) as Body[];
    // The newest user message; claude-agent-acp may end its requests with a system message.
    const lastUser = messages.filter((m) => m.role === "user").at(-1);
    return JSON.stringify(lastUser?.content ?? "").includes('"tool_result"');
  },
  quickAnswer(path, body, response) {
    if (path.endsWith("/count_tokens")) return sendJson(response, { input_tokens: 1 });
    if (body.stream !== true) {
      return sendJson(response, {
        id: "msg_quick", type: "message", role: "assistant", model: body.model ?? "scripted",
        content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    }
    const stream = this.stream(response);
    stream.begin();
    stream.finish("ok");
  },
  stream: (response) => new AnthropicStream(response),
};

class AnthropicStream implements AnswerStream {
  private textOpen = false;

  constructor(private readonly response: ServerResponse) {}

  private event(name: string, data: Body): void {
    writeSse(this.response, { type: name, ...data }, name);
  }

  begin(): void {
    beginSse(this.response);
    this.event("message_start", {
      message: {
        id: "msg_1", type: "message", role: "assistant", model: "scripted", content: [],
        stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 },
      },
    });
  }

  text(delta: string): void {
    if (!this.textOpen) {
      this.textOpen = true;
      this.event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    }
    this.event("content_block_delta", { index: 0, delta: { type: "text_delta", text: delta } });
  }

  finish(text: string): void {
    this.text(text);
    this.event("content_block_stop", { index: 0 });
    this.stop("end_turn");
  }

  toolCall(name: string, args: Record<string, unknown>): void {
    this.event("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_1", name, input: {} } });
    this.event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(args) } });
    this.event("content_block_stop", { index: 0 });
    this.stop("tool_use");
  }

  private stop(reason: string): void {
    this.event("message_delta", { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 1 } });
    this.event("message_stop", {});
    this.response.end();
  }
}
