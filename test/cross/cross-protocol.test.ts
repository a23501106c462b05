import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { CrossEvent } from "../../examples/cross-protocol/events.js";
import { CHROMIUM, type CrossRun, runCrossProtocol } from "../../examples/cross-protocol/session.js";
import { toTrace } from "../../examples/cross-protocol/trace.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

const after = (run: CrossRun, pattern: RegExp, protocol?: string): CrossEvent[] =>
  run.events.filter((e) => e.at >= run.stopAt && pattern.test(e.label) && (protocol === undefined || e.protocol === protocol));

/** The events of `protocol` sent by the agent after Stop, by label. */
const sentAfterStop = (run: CrossRun, protocol: string) =>
  run.events.filter((e) => e.kind === "message" && e.from === "agent" && e.protocol === protocol && e.at >= run.stopAt).map((e) => e.label);

describe("one Stop reaches everything: an ACP turn's cancel crosses into MCP, RAP, A2A and ABP (real processes and servers)", function () {
  this.timeout(60_000);
  const chromium = existsSync(CHROMIUM);

  let run: CrossRun;
  before(async () => {
    run = await runCrossProtocol({ graceMs: 60_000 }); // only the children can release the answer
  });

  it("a single session/cancel reaches all four; each counterpart's work stops; the prompt is answered cancelled once, after the children settled; every table is empty", () => {
    assert.equal(run.abp, chromium);
    assert.equal(run.childrenBeforeStop, chromium ? 4 : 3, "one child job per protocol under the turn");

    // Each binding sent its own protocol's cancel, once.
    assert.deepEqual(sentAfterStop(run, "MCP"), ["notifications/cancelled"]);
    assert.deepEqual(sentAfterStop(run, "RAP"), ["POST /cancel_tool_call"]);
    assert.equal(after(run, /^(tasks\/cancel|CancelTask) /, "A2A").filter((e) => e.kind === "message").length, 1, "one A2A cancel reached the agent");
    assert.deepEqual(
      after(run, /cancel .*\? allow$/, "AOS").map((e) => (e.kind === "message" ? e.from : "")),
      ["agent", "a2a-agent"],
      "the guardian allowed it at both hooks",
    );
    if (chromium) assert.deepEqual(sentAfterStop(run, "ABP"), ["capabilities/cancel"]);

    // Each counterpart's work stopped.
    assert.equal(after(run, /tool search stopped .* handler signal aborted/, "MCP").length, 1, "the MCP tool's signal aborted");
    assert.ok(run.rap.pid !== undefined);
    assert.equal(run.rap.stillRunning, false, "the RAP child process is gone");
    assert.equal(after(run, /child process \d+ gone/, "RAP").length, 1);
    assert.equal(run.a2a.taskState, 5, "the A2A task is canceled");
    assert.equal(after(run, /work stopped after \d+ paragraphs/, "A2A").length, 1);
    if (chromium) {
      assert.ok(run.after.page !== null && run.pageLater !== null);
      assert.equal(run.after.page.counters.renderAborts, 1, "the page's render aborted");
      assert.equal(run.pageLater.counters.rows, run.after.page.counters.rows, "the page's counter stopped");
      assert.equal(after(run, /capabilities\/cancel-result: cancelled true/, "ABP").length, 1);
    }

    // Answered once, cancelled, after every child settled.
    assert.deepEqual(run.answer, { stopReason: "cancelled" });
    assert.equal(run.promptAnswers, 1);
    assert.equal(after(run, /^session\/prompt answered/, "ACP").filter((e) => e.kind === "note").length, 1, "one answer left the agent");
    assert.equal(run.after.childrenAtAnswer, 0, "no child of any binding was still out when the answer left");
    const a2aAnswered = after(run, /^tasks\/cancel answered: canceled$/, "A2A")[0];
    assert.ok(a2aAnswered !== undefined && run.after.turnAnsweredAt !== null);

    // Empty tables everywhere.
    assert.deepEqual(run.after.acp, { client: 0, agent: 0 });
    assert.equal(run.after.mcp, 0);
    assert.equal(run.after.rap, 0);
    assert.equal(run.rap.registry, 0);
    assert.equal(run.after.abp, 0);
    assert.equal(run.a2a.running, 0);
    if (chromium) assert.equal(run.pageLater?.stats.running, 0);
  });

  it("acp-cancel trace renders the whole cascade across protocols as a timeline and a mermaid sequence diagram", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cross-trace-"));
    try {
      const file = join(dir, "cross.jsonl");
      writeFileSync(file, toTrace(run.events));
      const exec = promisify(execFile);
      const timeline = (await exec(process.execPath, [CLI, "trace", file])).stdout.split("\n");
      const line = (pattern: RegExp) => timeline.findIndex((l) => pattern.test(l));
      const stop = line(/ACP {2}editor → agent {2}session\/cancel \(Stop\)/);
      assert.ok(stop >= 0, timeline.join("\n"));
      const cancels = [
        /MCP {2}agent → mcp-server {2}notifications\/cancelled/,
        /RAP {2}agent → rap-tool-server {2}POST \/cancel_tool_call/,
        /A2A {2}agent → a2a-agent {2}(CancelTask|tasks\/cancel) /,
        ...(run.abp ? [/ABP {2}agent → browser-app {2}capabilities\/cancel$/] : []),
      ];
      for (const pattern of cancels) assert.ok(line(pattern) > stop, `${String(pattern)} after Stop`);
      const answered = line(/ACP {2}agent → editor {2}session\/prompt answered/);
      assert.ok(answered > stop && cancels.every((p) => line(p) < answered), "the answer comes last");
      const mermaid = (await exec(process.execPath, [CLI, "trace", file, "--mermaid"])).stdout;
      assert.match(mermaid, /^sequenceDiagram\n/);
      for (const party of ["editor", "agent", "mcp-server", "rap-tool-server", "a2a-agent", "guardian", ...(run.abp ? ["browser-app"] : [])]) {
        assert.match(mermaid, new RegExp(`participant P\\d+ as ${party}\\n`), party);
      }
      assert.match(mermaid, /P\d+->>P\d+: \[MCP\] notifications\/cancelled \(\d+\.\d ms\)/);
      assert.doesNotMatch(mermaid, /[;#]/, "nothing that breaks a mermaid statement");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a counterpart that ignores its cancel delays the answer by its own grace and no longer (A2A work ignoring its signal; the agent's ACP grace is 60 s)", async () => {
    const run = await runCrossProtocol({ abp: false, a2aStubborn: true, a2aGraceMs: 500, graceMs: 60_000 });
    assert.deepEqual(run.answer, { stopReason: "cancelled" });
    assert.equal(run.promptAnswers, 1);
    // The A2A task's work never stopped by itself: the A2A agent's executor answered the cancel at its grace.
    assert.equal(after(run, /work stopped/, "A2A").length, 0);
    assert.equal(run.a2a.taskState, 5);
    assert.equal(run.after.childrenAtAnswer, 0, "the answer waited for the A2A child");
    // The other children did not wait for it, and nothing waited for the 60 s ACP grace (the test would time out).
    assert.equal(after(run, /tool search stopped/, "MCP").length, 1);
    assert.equal(run.rap.stillRunning, false);
    assert.deepEqual(run.after.acp, { client: 0, agent: 0 });
    assert.equal(run.after.mcp + run.after.rap + run.rap.registry, 0);
  });
});
