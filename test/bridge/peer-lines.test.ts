import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { runBridge } from "../../src/bridge/bridge.js";
import { scratchDir } from "../support/bridge-harness.js";
import { collectLines, fixturePath } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

/**
 * Lines an editor should never send, to a bridge in this process: none ends it, each is answered
 * (with id null when its start names no id it can trust), and what the log says of them carries
 * no raw control character.
 */
describe("the bridge and a peer's bad lines: answered, survived, logged without their text", () => {
  it("oversized lines with bad escapes, a repeated id or an id beyond 2^53 get id null; the bridge goes on", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const received = collectLines(output);
    const logFile = join(scratchDir(), "peer-lines.log");
    const status = runBridge({
      command: process.execPath,
      args: [fixturePath("sdk-agent")],
      maxLineBytes: 900, // the agent's initialize answer (with our capability) fits; the bad lines below do not
      exitGraceMs: 200,
      killGraceMs: 200,
      logFile,
      editorInput: input,
      editorOutput: output,
    });
    const pad = "x".repeat(1200);
    const oversized = [
      `{"\\q":1,"id":7,"method":"m","params":{"pad":"${pad}"}}`, // a key that is not valid JSON
      `{"id":"\\q","method":"m","params":{"pad":"${pad}"}}`, // an id that is not valid JSON
      `{"id":1,"method":"m","id":2,"params":{"pad":"${pad}"}}`, // the id key twice
      `{"id":9007199254740993,"method":"m","params":{"pad":"${pad}"}}`, // 2^53 + 1: no float names it
    ];
    for (const line of oversized) input.write(`${line}\n`);
    input.write('{"not json \u001b[31m red-marker\u0007\n');
    await eventually(() => (received.length >= 5 ? true : undefined), "five answers");
    for (const answer of received.slice(0, 4)) {
      assert.equal(answer.id, null, JSON.stringify(answer));
      assert.equal((answer.error as { code: number }).code, -32600);
    }
    assert.equal((received[4]?.error as { code: number }).code, -32700);
    // Still a bridge: a real request after them is relayed and answered.
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
    await eventually(() => received.find((m) => m.id === 1 && "result" in m), "initialize answered");
    input.end();
    assert.equal(await status, 0);
    const log = readFileSync(logFile, "utf8");
    assert.match(log, /line is not valid JSON/);
    assert.equal(log.includes("red-marker"), false, "an editor's bad line is described, never copied (it may hold a secret)");
    // eslint-disable-next-line no-control-regex
    assert.equal(/[\u0000-\u0008\u000b-\u001f\u007f]/u.test(log), false, "no raw control character in the log");
  });
});
