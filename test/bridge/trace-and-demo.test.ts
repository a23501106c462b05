import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as acp from "@agentclientprotocol/sdk";
import { CLI, closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";

const run = promisify(execFile);

describe("acp-cancel trace, and the npm start demo", () => {
  it("renders a bridge trace as a timeline and as a mermaid sequence diagram", async () => {
    const bridge = spawnBridge(["--emulate", "agent"], "legacy-agent");
    try {
      await acp
        .client({ name: "editor" })
        .connectWith(acp.ndJsonStream(bridge.output, bridge.input), async (agent) => {
          const sessionId = await openSession(agent);
          const stop = new AbortController();
          const prompt = agent.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "work"), {
            cancellationSignal: stop.signal,
          });
          await eventually(
            () => (bridge.hop("bridge->agent").some((m) => m.method === "session/prompt") ? true : undefined),
            "prompt at the agent",
          );
          stop.abort();
          await prompt;
        });
    } finally {
      await closeBridge(bridge);
    }
    const timeline = (await run(process.execPath, [CLI, "trace", bridge.traceFile])).stdout;
    assert.match(timeline, /editor → bridge {2}session\/prompt #2/);
    assert.match(timeline, /editor → bridge {2}\$\/cancel_request for #2/);
    assert.match(timeline, /bridge → agent {3}session\/cancel/);
    assert.match(timeline, /· emulated .*what=session\/cancel for a cancelled prompt/);
    assert.match(timeline, /bridge → editor {2}answer #2 \(result\)/);
    const mermaid = (await run(process.execPath, [CLI, "trace", bridge.traceFile, "--mermaid"])).stdout;
    assert.match(mermaid, /^sequenceDiagram\n/);
    assert.match(mermaid, /E->>B: \$\/cancel_request for #2 \(\d+\.\d ms\)/);
    assert.match(mermaid, /B->>A: session\/cancel \(\d+\.\d ms\)/);
  });

  it("npm start's demo: the bridge ends the turn and closes the dialog, the direct run does not", async () => {
    const demo = fileURLToPath(new URL("../../examples/demo/run-demo.js", import.meta.url));
    const { stdout } = await run(process.execPath, [demo]);
    assert.match(stdout, /without the bridge:[\s\S]*prompt: still running 2000 ms after Stop/);
    assert.match(stdout, /through acp-cancel bridge:[\s\S]*prompt: stopReason "cancelled" after \d/);
    assert.match(stdout, /turn ended after Stop +never +\d+\.\d ms/);
  });
});
