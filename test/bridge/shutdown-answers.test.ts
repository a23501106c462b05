import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { runBridge } from "../../src/bridge/bridge.js";
import { Logger } from "../../src/bridge/logger.js";
import type { TraceEntry } from "../../src/bridge/trace-writer.js";
import { scratchDir } from "../support/bridge-harness.js";
import { collectLines, fixturePath } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

const PENDING = 40;
/** Sessions whose `stream` turn asks the editor's permission, which the editor leaves open. */
const ASKING = 3;

type Line = Record<string, unknown>;
const line = (message: object) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
const isAnswer = (m: Line) => !("method" in m) && "id" in m;
const cancelledCode = (m: Line | undefined) => (m?.error as { code?: number } | undefined)?.code;

/**
 * docs/decisions.md, "Bridge: pending requests at shutdown": when the editor closes stdin or the
 * bridge gets SIGTERM/SIGINT, every editor request still pending is answered (-32800 naming the
 * shutdown) while the editor's stdout is open; what the agent asked of the editor is still answered
 * once, toward the agent.
 */
describe("bridge shutdown: both sides get what they are owed, once each", () => {
  for (const how of ["stdin closed", "SIGTERM"] as const) {
    it(`${how}: ${PENDING} pending requests and a prompt get -32800 naming it; the agent's ${ASKING} permission requests are answered once`, async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      const received = collectLines(output);
      const dir = scratchDir();
      const name = how.replace(" ", "-");
      const logFile = join(dir, `shutdown-${name}.log`);
      const traceFile = join(dir, `shutdown-${name}.jsonl`);
      const status = runBridge({
        command: process.execPath,
        args: [fixturePath("stuck-agent")],
        exitGraceMs: 200,
        killGraceMs: 200,
        logFile,
        trace: traceFile,
        editorInput: input,
        editorOutput: output,
      });
      const send = (message: object) => input.write(line(message));
      const answerTo = (id: unknown) => received.find((m) => isAnswer(m) && m.id === id);
      send({ id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await eventually(() => answerTo(1), "initialize answered");
      const sessions: string[] = [];
      for (let n = 0; n <= ASKING; n++) {
        send({ id: `new-${n}`, method: "session/new", params: { cwd: "/", mcpServers: [] } });
        const answer = await eventually(() => answerTo(`new-${n}`), "session/new answered");
        sessions.push((answer.result as { sessionId: string }).sessionId);
      }
      // A prompt that never ends on its own (its tool cannot be stopped), and turns that ask the editor.
      send({ id: "tool", method: "session/prompt", params: { sessionId: sessions[0], prompt: [{ type: "text", text: "tool" }] } });
      for (let n = 1; n <= ASKING; n++) {
        send({ id: `ask-${n}`, method: "session/prompt", params: { sessionId: sessions[n], prompt: [{ type: "text", text: "stream" }] } });
      }
      // `_test/hang` is never answered by the agent.
      for (let id = 100; id < 100 + PENDING; id++) send({ id, method: "_test/hang", params: {} });
      // The last one relayed means all were: a request the agent answers queues behind them.
      send({ id: 2, method: "_test/unknown", params: {} });
      await eventually(() => answerTo(2), "the agent answered the request sent after them");
      const asked = () => received.filter((m) => m.method === "session/request_permission");
      await eventually(() => (asked().length === ASKING ? true : undefined), "the agent's permission requests");
      if (how === "stdin closed") input.end();
      else process.emit("SIGTERM", "SIGTERM");
      assert.equal(await status, how === "SIGTERM" ? 143 : 0);

      const answers = received.filter(isAnswer);
      const editorIds: (string | number)[] = [1, 2, ...sessions.map((_, n) => `new-${n}`), "tool"];
      for (let n = 1; n <= ASKING; n++) editorIds.push(`ask-${n}`);
      for (let id = 100; id < 100 + PENDING; id++) editorIds.push(id);
      for (const id of editorIds) assert.equal(answers.filter((m) => m.id === id).length, 1, `editor request ${String(id)} answered once`);
      assert.equal(answers.length, editorIds.length, "no answer to anything else");
      const owed = answers.filter((m) => (typeof m.id === "number" && m.id >= 100) || m.id === "tool");
      for (const answer of owed) {
        assert.equal(cancelledCode(answer), -32800, JSON.stringify(answer));
        const data = (answer.error as { data?: { reason?: string; detail?: string } }).data;
        assert.equal(data?.reason, "shutdown", JSON.stringify(answer));
        assert.match(String(data?.detail), how === "SIGTERM" ? /SIGTERM/ : /closed its input/);
      }
      // The agent's requests to the editor: each answered once, toward the agent.
      const trace = readFileSync(traceFile, "utf8").trimEnd().split("\n").map((text) => JSON.parse(text) as TraceEntry);
      const shutdownAt = trace.findIndex((e) => e.note?.startsWith("shutdown:"));
      const late = trace.slice(shutdownAt).filter((e) => e.hop === "bridge->editor").map((e) => e.message as Line);
      assert.deepEqual(late.filter((m) => !isAnswer(m)), [], "after shutdown began, the editor is sent its answers only");
      const toAgent = trace.filter((e) => e.hop === "bridge->agent").map((e) => e.message as Line);
      for (const request of asked()) {
        assert.equal(toAgent.filter((m) => isAnswer(m) && m.id === request.id).length, 1, `agent request ${String(request.id)} answered once`);
      }
      const log = readFileSync(logFile, "utf8");
      for (const request of asked()) assert.match(log, new RegExp(`answer to ${String(request.id)}:`), "the agent read its answer");
      assert.ok(log.split("\n").length < 20, `a short log:\n${log}`);
    });
  }
});

describe("bridge log: a flood of one kind of warning is counted, not printed line by line", () => {
  it("the first 3 of a kind are printed; the rest are summed up in one line at close", async () => {
    const file = join(scratchDir(), "repeats.log");
    const logger = new Logger("warn", file);
    for (let id = 1; id <= 500; id++) logger.warnRepeated(`agent: response to unknown request id ${id}`);
    logger.warnRepeated('editor: $/cancel_request for "a"');
    await logger.close();
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    assert.deepEqual(lines, [
      "acp-cancel warn: agent: response to unknown request id 1",
      "acp-cancel warn: agent: response to unknown request id 2",
      "acp-cancel warn: agent: response to unknown request id 3",
      'acp-cancel warn: editor: $/cancel_request for "a"',
      'acp-cancel warn: 497 more warnings like "agent: response to unknown request id …" were not printed (500 in all)',
    ]);
  });
});
