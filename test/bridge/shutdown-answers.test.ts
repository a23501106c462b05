import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { runBridge } from "../../src/bridge/bridge.js";
import { Logger } from "../../src/bridge/logger.js";
import { scratchDir } from "../support/bridge-harness.js";
import { collectLines, fixturePath } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

const PENDING = 40;

/**
 * docs/decisions.md, "Bridge: pending requests at shutdown": when the editor closes stdin or the
 * bridge gets SIGTERM/SIGINT, every editor request still pending is answered (a cancelled answer
 * naming the shutdown) while the editor's stdout is open, before the agent is stopped.
 */
describe("bridge shutdown: what the editor is still owed is answered, once each", () => {
  for (const how of ["stdin closed", "SIGTERM"] as const) {
    it(`${how}: ${PENDING} pending requests each get -32800 naming the shutdown`, async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      const received = collectLines(output);
      const logFile = join(scratchDir(), `shutdown-${how.replace(" ", "-")}.log`);
      const status = runBridge({
        command: process.execPath,
        args: [fixturePath("stuck-agent")],
        exitGraceMs: 200,
        killGraceMs: 200,
        logFile,
        editorInput: input,
        editorOutput: output,
      });
      input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
      await eventually(() => received.find((m) => m.id === 1), "initialize answered");
      // `_test/hang` is never answered by the agent.
      for (let id = 100; id < 100 + PENDING; id++) input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "_test/hang", params: {} })}\n`);
      // The last one relayed means all were: a ping the agent answers queues behind them.
      input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "_test/unknown", params: {} })}\n`);
      await eventually(() => received.find((m) => m.id === 2), "the agent answered the request sent after them");
      if (how === "stdin closed") input.end();
      else process.emit("SIGTERM", "SIGTERM");
      assert.equal(await status, how === "SIGTERM" ? 143 : 0);
      const answers = received.filter((m) => typeof m.id === "number" && m.id >= 100);
      assert.equal(answers.length, PENDING, "each pending request answered");
      assert.equal(new Set(answers.map((m) => m.id)).size, PENDING, "once each");
      for (const answer of answers) {
        const error = answer.error as { code: number; message: string; data?: { reason?: string } };
        assert.equal(error.code, -32800, JSON.stringify(answer));
        assert.match(JSON.stringify(error), how === "SIGTERM" ? /SIGTERM/ : /closed its input/);
      }
      const log = readFileSync(logFile, "utf8");
      assert.ok(log.split("\n").length < 10, `a short log:\n${log}`);
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
