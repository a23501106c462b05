/**
 * Anthropic Messages, streamed (`POST /v1/messages`, `stream: true`): claude-agent-acp through
 * ANTHROPIC_BASE_URL, and opencode through its anthropic provider's `baseURL`.
 */
import type { Body, Dialect } from "./dialect.js";

const stop = (reason: string) => [
  { type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: "message_stop" },
];

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
  quickJson(path, body) {
    if (path.endsWith("/count_tokens")) return { input_tokens: 1 };
    if (body.stream === true) return undefined;
    return {
      id: "msg_quick", type: "message", role: "assistant", model: body.model ?? "scripted",
      content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
  },
  quickText: "ok",
  namedEvents: true,
  opening: () => [{
    type: "message_start",
    message: {
      id: "msg_1", type: "message", role: "assistant", model: "scripted", content: [],
      stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 },
    },
  }],
  text: (delta, first) => [
    ...(first ? [{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }] : []),
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: delta } },
  ],
  finish: (text) => [...anthropic.text(text, true), { type: "content_block_stop", index: 0 }, ...stop("end_turn")],
  toolCall: (name, args) => [
    { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name, input: {} } },
    { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(args) } },
    { type: "content_block_stop", index: 0 },
    ...stop("tool_use"),
  ],
};
