/** OpenAI Responses, streamed (`POST /v1/responses`): codex-acp through a provider in $CODEX_HOME/config.toml. */
import type { Body, Dialect } from "./dialect.js";

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

export const openaiResponses: Dialect = {
  name: "openai-responses",
  serves: (path) => path.endsWith("/responses"),
  offeredTools: (body) => (Array.isArray(body.tools) ? (body.tools as Body[]).map((t) => String(t.name ?? "")) : []),
  carriesToolResult: (body) => JSON.stringify(body.input ?? []).includes('"function_call_output"'),
  quickJson: () => undefined,
  quickText: "ok",
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
