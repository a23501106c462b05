/**
 * Gemini `streamGenerateContent?alt=sse` (gemini-cli through GOOGLE_GEMINI_BASE_URL). Before each
 * turn gemini-cli asks a small model, with a plain `generateContent`, which model to route to; the
 * quick answer is a JSON text that names the default one.
 */
import type { Body, Dialect } from "./dialect.js";

const USAGE = { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 };
// Routing ("model_choice") and next-speaker checks both read a JSON text.
const QUICK_TEXT = JSON.stringify({ reasoning: "scripted", model_choice: "flash", next_speaker: "user" });

function chunk(parts: Body[], finishReason?: string): Body {
  const candidate: Body = { content: { role: "model", parts }, index: 0 };
  if (finishReason !== undefined) candidate.finishReason = finishReason;
  return { candidates: [candidate], usageMetadata: USAGE, modelVersion: "scripted" };
}

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
  quickJson(path) {
    if (path.endsWith(":countTokens")) return { totalTokens: 1 };
    return path.endsWith(":generateContent") ? chunk([{ text: QUICK_TEXT }], "STOP") : undefined;
  },
  quickText: QUICK_TEXT,
  namedEvents: false,
  opening: () => [],
  text: (delta) => [chunk([{ text: delta }])],
  finish: (text) => [chunk([{ text }], "STOP")],
  toolCall: (name, args) => [chunk([{ functionCall: { name, args } }], "STOP")],
};
