/** OpenAI Chat Completions, streamed (`POST …/chat/completions`): qwen-code through OPENAI_BASE_URL. */
import type { ServerResponse } from "node:http";
import { type AnswerStream, beginSse, type Body, type Dialect, sendJson, writeSse } from "./dialect.js";

export const openaiChat: Dialect = {
  name: "openai-chat",
  serves: (path) => path.endsWith("/chat/completions"),
  offeredTools: (body) =>
    (Array.isArray(body.tools) ? (body.tools as Body[]).map((t) => String((t.function as Body | undefined)?.name ?? "")) : []),
  carriesToolResult(body) {
    const messages = (Array.isArray(body.messages) ? body.messages : []) as Body[];
    const lastNonSystem = messages.filter((m) => m.role !== "system").at(-1);
    return lastNonSystem?.role === "tool";
  },
  quickAnswer(_path, body, response) {
    if (body.stream !== true) {
      return sendJson(response, {
        id: "chatcmpl-quick", object: "chat.completion", created: 0, model: body.model ?? "scripted",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    }
    const stream = this.stream(response);
    stream.begin();
    stream.finish("ok");
  },
  stream: (response) => new ChatStream(response),
};

class ChatStream implements AnswerStream {
  constructor(private readonly response: ServerResponse) {}

  private chunk(delta: Body, finishReason: string | null = null): void {
    writeSse(this.response, {
      id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: "scripted",
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  }

  begin(): void {
    beginSse(this.response);
    this.chunk({ role: "assistant", content: "" });
  }

  text(delta: string): void {
    this.chunk({ content: delta });
  }

  finish(text: string): void {
    this.text(text);
    this.end("stop");
  }

  toolCall(name: string, args: Record<string, unknown>): void {
    this.chunk({
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: JSON.stringify(args) } }],
    });
    this.end("tool_calls");
  }

  private end(reason: string): void {
    this.chunk({}, reason);
    writeSse(this.response, {
      id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: "scripted", choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
    writeSse(this.response, "[DONE]");
    this.response.end();
  }
}
