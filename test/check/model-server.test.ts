/**
 * The scripted model, in process: each dialect streams, calls the agent's shell tool by the name
 * the request offers, answers non-turn requests at once, and records the moment a client closes a
 * held request. (The real agents against it: test/interop/.)
 */
import assert from "node:assert/strict";
import { type DialectName, startModelServer } from "../../src/check/index.js";

const TURNS: Record<DialectName, { path: string; body: (tool: string) => Record<string, unknown> }> = {
  "anthropic": { path: "/v1/messages", body: (tool) => ({ stream: true, tools: [{ name: tool }], messages: [{ role: "user", content: "hi" }] }) },
  "openai-responses": { path: "/v1/responses", body: (tool) => ({ stream: true, tools: [{ type: "function", name: tool }], input: [] }) },
  "openai-chat": {
    path: "/v1/chat/completions",
    body: (tool) => ({ stream: true, tools: [{ type: "function", function: { name: tool } }], messages: [{ role: "user", content: "hi" }] }),
  },
  "gemini": {
    path: "/v1beta/models/m:streamGenerateContent",
    body: (tool) => ({ tools: [{ functionDeclarations: [{ name: tool }] }], contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
  },
};
const SHELL: Record<DialectName, string> = {
  "anthropic": "Bash", "openai-responses": "exec_command", "openai-chat": "run_shell_command", "gemini": "run_shell_command",
};

describe("check: the scripted model server", () => {
  for (const [dialect, turn] of Object.entries(TURNS) as [DialectName, (typeof TURNS)[DialectName]][]) {
    it(`${dialect}: finish streams the text; shell calls the offered shell tool with the command`, async () => {
      const model = await startModelServer({ script: { kind: "finish", text: "scripted words" } });
      try {
        const post = (body: unknown) => fetch(`${model.url}${turn.path}?alt=sse`, { method: "POST", body: JSON.stringify(body) });
        const finished = await (await post(turn.body(SHELL[dialect]))).text();
        assert.match(finished, /scripted words/);
        model.script = { kind: "shell", command: "echo marker-42" };
        const called = await (await post(turn.body(SHELL[dialect]))).text();
        assert.match(called, /marker-42/);
        assert.deepEqual(model.turns.map((t) => [t.dialect, t.toolCalled, t.finishedAt !== undefined]), [
          [dialect, undefined, true],
          [dialect, SHELL[dialect], true],
        ]);
        assert.deepEqual(model.closedRequests, []);
      } finally {
        await model.close();
      }
    });

    it(`${dialect}: hold streams until the client closes the request, and records when`, async () => {
      const model = await startModelServer({ script: { kind: "hold" }, holdTickMs: 20 });
      try {
        const abort = new AbortController();
        const response = await fetch(`${model.url}${turn.path}`, { method: "POST", body: JSON.stringify(turn.body("bash")), signal: abort.signal });
        assert.ok(response.body !== null);
        const reader = response.body.getReader();
        assert.match(new TextDecoder().decode((await reader.read()).value), /working/);
        assert.equal(model.streaming.length, 1);
        abort.abort();
        for (let i = 0; model.closedRequests.length === 0 && i < 500; i++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(model.closedRequests.length, 1);
        assert.equal(model.streaming.length, 0);
        assert.equal(model.turns[0]?.finishedAt, undefined);
      } finally {
        await model.close();
      }
    });
  }

  it("answers a request without tools (a title, a routing call) at once, records no turn, and refuses bad or too large bodies", async () => {
    const model = await startModelServer({ script: { kind: "hold" } });
    try {
      const routed = await fetch(`${model.url}/v1beta/models/lite:generateContent`, { method: "POST", body: "{}" });
      assert.match(await routed.text(), /model_choice/);
      const title = await fetch(`${model.url}/v1/messages`, { method: "POST", body: JSON.stringify({ messages: [] }) });
      assert.equal(((await title.json()) as { stop_reason: string }).stop_reason, "end_turn");
      assert.equal((await fetch(`${model.url}/v1/messages`, { method: "POST", body: "not json" })).status, 400);
      // Too large: 413, the rest of the body drained briefly so that the agent reads the status (wire's readNodeBody).
      assert.equal((await fetch(`${model.url}/v1/messages`, { method: "POST", body: "x".repeat(16 * 1024 * 1024 + 1) })).status, 413);
      assert.equal((await fetch(`${model.url}/elsewhere`, { method: "POST", body: "{}" })).status, 404);
      assert.deepEqual(model.turns, []);
    } finally {
      await model.close();
    }
  });
});
