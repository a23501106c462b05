import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { harness, openSession, textPrompt } from "../support/client-harness.js";
import { assertEachAnsweredOnce } from "../support/wire-assertions.js";
import { alive, pidsIn, until } from "./http-support.js";
import { startToolServer } from "./tool-server.js";

describe("RAP under ACP: session/cancel from the editor reaches the tool server", () => {
  it("an embedded SDK agent's RAP tool call is cancelled: the tool server gets the notice and its process tree dies", async () => {
    const pidDir = mkdtempSync(join(tmpdir(), "rap-acp-pids-"));
    const tool = await startToolServer("editor-token", pidDir);
    try {
      // The test is the editor: a real SDK client; the agent is a real subprocess over stdio.
      const h = harness(acp.client({ name: "editor" }), [tool.url, "editor-token"], "rap-acp-agent");
      await h.run(async (agent) => {
        const sessionId = await openSession(agent);
        const prompt = agent.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "run the tool"));
        const pids = await until(() => (pidsIn(tool.pidFile("call-1")).length === 2 ? pidsIn(tool.pidFile("call-1")) : undefined), "the tool's process tree");
        for (const pid of pids) assert.equal(alive(pid), true);
        const tempDir = tool.tempDirs.get("call-1");
        assert.ok(tempDir !== undefined && existsSync(tempDir));

        await agent.notify(acp.methods.agent.session.cancel, { sessionId });
        assert.deepEqual(await prompt, { stopReason: "cancelled" });

        await until(() => tool.notices.length > 0, "the cancel notice");
        assert.deepEqual(
          tool.notices.map((n) => [n.status, n.effect, n.threadId, n.toolCallId]),
          [[200, "cancelled", sessionId, "call-1"]],
        );
        const result = await tool.runs.get("call-1");
        assert.equal(result?.stopped, true);
        for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
        assert.equal(existsSync(tempDir), false);
        assert.equal(tool.registry.size, 0);
        assert.deepEqual(await agent.request("_test/rap_in_flight", {}), { calls: 0 });
        // The agent's runtime saw its notice delivered (its outcome event, logged to stderr).
        await until(() => /"type":"cancel-notice".*"result":"ok"/.test(h.peer.stderr()), "the notice's outcome");
      });
      assertEachAnsweredOnce(h.log);
    } finally {
      await tool.close();
      rmSync(pidDir, { recursive: true, force: true });
    }
  });
});
