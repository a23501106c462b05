/** OpenAI Chat Completions, streamed (`POST …/chat/completions`): qwen-code through OPENAI_BASE_URL. */
import type { Body, Dialect, SseData } from "./dialect.js";

const CHUNK = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: "scripted" };
function chunk(delta: Body, finishReason: string | null = null): Body {
  return { ...CHUNK, choices: [{ index: 0, delta, finish_reason: finishReason }] };
}
const end = (reason: string): SseData[] => [
  chunk({}, reason),
  { ...CHUNK, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
  "[DONE]",
];

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
  quickJson(_path, body) {
    if (body.stream === true) return undefined;
    return {
      id: "chatcmpl-quick", object: "chat.completion", created: 0, model: body.model ?? "scripted",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  },
  quickText: "ok",
  namedEvents: false,
  opening: () => [chunk({ role: "assistant", content: "" })],
  text: (delta) => [chunk({ content: delta })],
  finish: (text) => [chunk({ content: text }), ...end("stop")],
  toolCall: (name, args) => [
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: JSON.stringify(args) } }] }),
    ...end("tool_calls"),
  ],
};
