/** The API dialects the scripted model speaks: routing, reading a request, and the events of an answer. */

export type Body = Record<string, unknown>;
/** One SSE event's data: an object sent as JSON, or a string sent as it is (`[DONE]`). */
export type SseData = Body | string;
export type DialectName = "anthropic" | "openai-responses" | "openai-chat" | "gemini";

export interface Dialect {
  readonly name: DialectName;
  /** Whether a request to `path` (no query) is this dialect's. */
  serves(path: string): boolean;
  /** The tool names a request offers: none means it is not a turn (a title, a routing call). */
  offeredTools(body: Body): string[];
  /** Whether the request carries a tool's result (the model's next step after a tool call). */
  carriesToolResult(body: Body): boolean;
  /** A request that is not a turn: its short JSON answer, or a text to stream as a whole answer. */
  quick(path: string, body: Body): Body | string;
  /** Whether each event is named (an `event:` line), by its data's `type`. */
  readonly namedEvents: boolean;
  /** A streamed answer: its opening, then held text (`first`: its first piece), or an end with the whole text or a tool call. */
  opening(): SseData[];
  text(delta: string, first: boolean): SseData[];
  finish(text: string): SseData[];
  toolCall(name: string, args: Body): SseData[];
}

const list = (value: unknown): Body[] => (Array.isArray(value) ? (value as Body[]) : []);
const toolNames = (body: Body) => list(body.tools).map((t) => String(t.name ?? ""));

/** OpenAI Responses, streamed (`POST /v1/responses`): codex-acp through a provider in $CODEX_HOME/config.toml. */
const MESSAGE = { type: "message", id: "msg_1", role: "assistant" };
const textDelta = (delta: string) => ({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta });
/** `usage` is required: input, output and total tokens, the details null. */
const completed = {
  type: "response.completed",
  response: {
    id: "resp_1", object: "response", status: "completed", output: [],
    usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 },
  },
};
const itemAdded = (item: Body) => ({ type: "response.output_item.added", output_index: 0, item });
const itemDone = (item: Body) => ({ type: "response.output_item.done", output_index: 0, item });

const openaiResponses: Dialect = {
  name: "openai-responses",
  serves: (path) => path.endsWith("/responses"),
  offeredTools: toolNames,
  carriesToolResult: (body) => JSON.stringify(body.input ?? []).includes('"function_call_output"'),
  quick: () => "ok",
  namedEvents: true,
  opening: () => [{ type: "response.created", response: { id: "resp_1", object: "response", status: "in_progress", output: [] } }],
  text: (delta, first) => [...(first ? [itemAdded({ ...MESSAGE, status: "in_progress", content: [] })] : []), textDelta(delta)],
  finish: (text) => [
    ...openaiResponses.text(text, true),
    itemDone({ ...MESSAGE, status: "completed", content: [{ type: "output_text", text, annotations: [] }] }),
    completed,
  ],
  toolCall(name, args) {
    const item = { type: "function_call", id: "fc_1", call_id: "call_1", name };
    return [itemAdded({ ...item, arguments: "", status: "in_progress" }), itemDone({ ...item, arguments: JSON.stringify(args), status: "completed" }), completed];
  },
};

/** OpenAI Chat Completions, streamed (`POST …/chat/completions`): qwen-code through OPENAI_BASE_URL, opencode by its config. */
const CHUNK = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: "scripted" };
function chatChunk(delta: Body, reason: string | null = null): Body {
  return { ...CHUNK, choices: [{ index: 0, delta, finish_reason: reason }] };
}
const chatEnd = (reason: string): SseData[] => [
  chatChunk({}, reason),
  { ...CHUNK, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
  "[DONE]",
];

const openaiChat: Dialect = {
  name: "openai-chat",
  serves: (path) => path.endsWith("/chat/completions"),
  offeredTools: (body) => list(body.tools).map((t) => String((t.function as Body | undefined)?.name ?? "")),
  carriesToolResult: (body) => list(body.messages).filter((m) => m.role !== "system").at(-1)?.role === "tool",
  quick(_path, body) {
    if (body.stream === true) return "ok";
    return {
      id: "chatcmpl-quick", object: "chat.completion", created: 0, model: body.model ?? "scripted",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  },
  namedEvents: false,
  opening: () => [chatChunk({ role: "assistant", content: "" })],
  text: (delta) => [chatChunk({ content: delta })],
  finish: (text) => [chatChunk({ content: text }), ...chatEnd("stop")],
  toolCall: (name, args) => [
    chatChunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: JSON.stringify(args) } }] }),
    ...chatEnd("tool_calls"),
  ],
};

/**
 * Gemini `streamGenerateContent?alt=sse` (gemini-cli through GOOGLE_GEMINI_BASE_URL). Before each turn gemini-cli asks,
 * with a plain `generateContent`, which model to route to: the quick answer names the default (next-speaker checks too).
 */
const GEMINI_QUICK_TEXT = JSON.stringify({ reasoning: "scripted", model_choice: "flash", next_speaker: "user" });
const geminiChunk = (parts: Body[], finishReason?: string): Body => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason === undefined ? {} : { finishReason }) }],
  usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
  modelVersion: "scripted",
});

const gemini: Dialect = {
  name: "gemini",
  serves: (path) => /:(?:generateContent|streamGenerateContent|countTokens)$/.test(path),
  offeredTools: (body) => list(body.tools).flatMap((t) => list(t.functionDeclarations)).map((f) => String(f.name ?? "")),
  carriesToolResult: (body) => JSON.stringify(list(body.contents).at(-1)?.parts ?? []).includes('"functionResponse"'),
  quick(path) {
    if (path.endsWith(":countTokens")) return { totalTokens: 1 };
    return path.endsWith(":generateContent") ? geminiChunk([{ text: GEMINI_QUICK_TEXT }], "STOP") : GEMINI_QUICK_TEXT;
  },
  namedEvents: false,
  opening: () => [],
  text: (delta) => [geminiChunk([{ text: delta }])],
  finish: (text) => [geminiChunk([{ text }], "STOP")],
  toolCall: (name, args) => [geminiChunk([{ functionCall: { name, args } }], "STOP")],
};

/** Anthropic Messages, streamed (`POST /v1/messages`, `stream: true`): claude-agent-acp through ANTHROPIC_BASE_URL. */
const anthropicStop = (reason: string) => [
  { type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: "message_stop" },
];
/** A whole message: the quick answer, or the empty one a stream opens with. */
const anthropicMessage = (id: string, model: unknown, content: Body[], stopReason: string | null): Body => ({
  id, type: "message", role: "assistant", model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 },
});

const anthropic: Dialect = {
  name: "anthropic",
  serves: (path) => path.endsWith("/messages") || path.endsWith("/count_tokens"),
  offeredTools: toolNames,
  carriesToolResult(body) {
    // The newest user message; claude-agent-acp may end its requests with a system message.
    const lastUser = list(body.messages).filter((m) => m.role === "user").at(-1);
    return JSON.stringify(lastUser?.content ?? "").includes('"tool_result"');
  },
  quick(path, body) {
    if (path.endsWith("/count_tokens")) return { input_tokens: 1 };
    return body.stream === true ? "ok" : anthropicMessage("msg_quick", body.model ?? "scripted", [{ type: "text", text: "ok" }], "end_turn");
  },
  namedEvents: true,
  opening: () => [{ type: "message_start", message: anthropicMessage("msg_1", "scripted", [], null) }],
  text: (delta, first) => [
    ...(first ? [{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }] : []),
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: delta } },
  ],
  finish: (text) => [...anthropic.text(text, true), { type: "content_block_stop", index: 0 }, ...anthropicStop("end_turn")],
  toolCall: (name, args) => [
    { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name, input: {} } },
    { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(args) } },
    { type: "content_block_stop", index: 0 },
    ...anthropicStop("tool_use"),
  ],
};

export const DIALECTS: readonly Dialect[] = [openaiResponses, openaiChat, gemini, anthropic];
