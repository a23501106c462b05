/**
 * An agent that stops reading its stdin (hung, here SIGSTOPped) while the editor has sent it more than
 * the pipe holds: the editor's Stop must still be read, and the prompt answered within the grace.
 */
import assert from "node:assert/strict";
import { closeBridge, isAlive, spawnBridge } from "../support/bridge-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { openRawSession, pidFrom, prompt, RawPeer, sleep } from "../reliability/support.js";

/** Far more than a pipe (64 KiB) and the bridge's write buffer hold. */
const PROMPT_BYTES = 1024 * 1024;

describe("bridge: an agent that stops reading its stdin", function () {
  this.timeout(20_000); // a hang fails here

  it("a Stop sent after a prompt the agent cannot take in is read, and the prompt answered cancelled by the bridge", async () => {
    const bridge = spawnBridge(["--grace-ms", "200"], "stuck-agent");
    const editor = new RawPeer(bridge.input, bridge.child.stdin);
    let agent: number | undefined;
    try {
      const sessionId = await openRawSession(editor);
      agent = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent pid");
      process.kill(agent, "SIGSTOP");
      editor.send(prompt("big", sessionId, "x".repeat(PROMPT_BYTES)));
      await sleep(300); // the bridge wrote what the agent's pipe takes, and holds the rest
      editor.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
      assert.deepEqual((await editor.answer("big", 15_000)).result, { stopReason: "cancelled" });
      assert.equal(editor.responsesTo("big").length, 1, "answered once");
    } finally {
      if (agent !== undefined && isAlive(agent)) process.kill(agent, "SIGCONT");
      await closeBridge(bridge);
    }
  });
});
