/**
 * Gemini `streamGenerateContent?alt=sse` (gemini-cli through GOOGLE_GEMINI_BASE_URL). Before each
 * turn gemini-cli asks a small model, with a plain `generateContent`, which model to route to; the
 * quick answer is a JSON text that names the default one.
 */
import type { ServerResponse } from "node:http";
import { type AnswerStream, beginSse, type Body, type Dialect, sendJson, writeSse } from "./dialect.js";

const USAGE = { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 };

export const gemini: Dialect = {
  name: "gemini",
  serves: (path) => /:(?:generateContent|streamGenerateContent|countTokens)$/.test(path),
  offeredTools: (body) =>
    (Array.isArray(body.tools) ? (body.tools as Body[]) : [])
      .flatMap((t) => (Array.isArray(t.functionDeclarations) ? (t.functionDeclarations as Body[]) : []))
      .map((f) => String(f.name ?? "")),
  carriesToolResult(body) {
    const contents = (Array.isArray(body.contents) ? body.contents : []) as Body[];
    return JSON.stringify(contents.at(-1)?.parts ?? []).includes('"functionResponse"');
  },
  quickAnswer(path, _body, response) {
    if (path.endsWith(":countTokens")) return sendJson(response, { totalTokens: 1 });
    // Routing ("model_choice") and next-speaker checks both read a JSON text.
    const text = JSON.stringify({ reasoning: "scripted", model_choice: "flash", next_speaker: "user" });
    const candidate = { content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 };
    if (path.endsWith(":generateContent")) return sendJson(response, { candidates: [candidate], usageMetadata: USAGE });
    beginSse(response);
    writeSse(response, { candidates: [candidate], usageMetadata: USAGE });
    response.end();
  },
  stream: (response) => new GeminiStream(response),
};

class GeminiStream implements AnswerStream {
  constructor(private readonly response: ServerResponse) {}

  private chunk(parts: Body[], finishReason?: string): void {
    const candidate: Body = { content: { role: "model", parts }, index: 0 };
    if (finishReason !== undefined) candidate.finishReason = finishReason;
    writeSse(this.response, { candidates: [candidate], usageMetadata: USAGE, modelVersion: "scripted" });
  }

  begin(): void {
    beginSse(this.response);
  }

  text(delta: string): void {
    this.chunk([{ text: delta }]);
  }

  finish(text: string): void {
    this.chunk([{ text }], "STOP");
    this.response.end();
  }

  toolCall(name: string, args: Record<string, unknown>): void {
    this.chunk([{ functionCall: { name, args } }], "STOP");
    this.response.end();
  }
}
