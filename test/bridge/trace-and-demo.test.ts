import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as acp from "@agentclientprotocol/sdk";
import { CLI, closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";

const run = promisify(execFile);

/** A timeline line of the cross-protocol part: its time after Stop, who, and what. */
function timelineOf(text: string): { at: number; who: string; label: string }[] {
  const lines = [...text.matchAll(/^ +([+-]\d+\.\d) ms {2}(\S.{27}) (.*)$/gm)];
  return lines.map(([, at = "", who = "", label = ""]) => ({ at: Number(at), who: who.trim(), label }));
}

/** npm start's part 2 says only what its own timeline shows (issue 37, item 12). */
function checkCrossClaims(text: string): void {
  const header = /One Stop reaches everything: an ACP turn working in (.*) at once\./.exec(text)?.[1] ?? "";
  assert.match(header, /MCP, RAP and A2A/, text);
  if (/ABP, the browser-app protocol, is not part of this run/.test(text)) assert.doesNotMatch(header, /ABP/, "the header names only what runs");
  const timeline = timelineOf(text);
  const answeredAt = Number(/The turn was answered \{"stopReason":"cancelled"\} once, at \+(\d+\.\d) ms/.exec(text)?.[1]);
  const editorGotIt = timeline.find((e) => e.who === "agent → editor" && e.label.startsWith("session/prompt answered"));
  assert.equal(editorGotIt?.at, answeredAt, `the answer's time is the timeline's:\n${text}`);
  const ended = timeline.filter((e) => /child process \d+ (ended|gone)|work stopped after/.test(e.label));
  assert.ok(ended.length >= 3, `the MCP and RAP processes and the A2A work end in the timeline:\n${text}`);
  for (const work of ended.filter((e) => e.at > answeredAt)) {
    assert.match(text, /^Stopped after the answer: /m, text);
    assert.ok(text.includes(`${work.label} at +${work.at.toFixed(1)} ms`), `"${work.label}" after the answer is said so:\n${text}`);
  }
  if (/Every piece of work had stopped before the answer/.test(text)) assert.ok(ended.every((e) => e.at <= answeredAt), text);
  const lookedAt = /Nothing was left running at \+(\d+\.\d) ms/.exec(text)?.[1];
  if (lookedAt !== undefined) for (const work of ended) assert.ok(work.at <= Number(lookedAt), `"${work.label}" ended by +${lookedAt} ms:\n${text}`);
  // A duration printed beside the timeline agrees with the timeline.
  const sent = timeline.find((e) => e.who === "agent → rap-tool-server" && e.label === "POST /cancel_tool_call");
  const answered = timeline.find((e) => /^cancel notice answered 200 \(\d+\.\d ms after it was sent\)$/.test(e.label));
  assert.ok(sent !== undefined && answered !== undefined, text);
  const took = Number(/\((\d+\.\d) ms/.exec(answered.label)?.[1]);
  assert.ok(Math.abs(answered.at - sent.at - took) <= 0.15, `${answered.label} at +${answered.at} ms, sent at +${sent.at} ms`);
}

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

  it("npm start's demo: the bridge ends the turn and closes the dialog, the direct run does not; what it prints is what its timeline shows", async function () {
    this.timeout(180_000); // the whole demo: a dozen real processes and servers (about 30 s at load 20); a hang limit
    const demo = fileURLToPath(new URL("../../examples/demo/run-demo.js", import.meta.url));
    const { stdout } = await run(process.execPath, [demo]);
    assert.match(stdout, /without the bridge:[\s\S]*prompt: still running 2000 ms after Stop/);
    assert.match(stdout, /through acp-cancel bridge:[\s\S]*prompt: stopReason "cancelled" after \d/);
    assert.match(stdout, /turn ended after Stop +never +\d+\.\d ms/);
    checkCrossClaims(stdout.slice(stdout.indexOf("Part 2 of 2")));
  });
});
