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
import { checkCrossTrace, crossHops } from "../../examples/cross-protocol/trace-check.js";
import { type OtlpReceiver, otlpReceiver, type ReceivedSpan } from "../../examples/otel/otlp-receiver.js";
import { traceShape } from "../../examples/otel/span-tree.js";
import { eventually } from "../support/wire-assertions.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

const afterStop = (run: CrossRun, pattern: RegExp, protocol?: string): CrossEvent[] =>
  run.events.filter((e) => e.at >= run.stopAt && pattern.test(e.label) && (protocol === undefined || e.protocol === protocol));

/** The events of `protocol` sent by the agent after Stop, by label. */
const sentAfterStop = (run: CrossRun, protocol: string) =>
  run.events.filter((e) => e.kind === "message" && e.from === "agent" && e.protocol === protocol && e.at >= run.stopAt).map((e) => e.label);

describe("one Stop reaches everything: an ACP turn's cancel crosses into MCP, RAP, A2A and ABP (real processes and servers)", function () {
  this.timeout(60_000);
  const chromium = existsSync(CHROMIUM);

  let run: CrossRun;
  let receiver: OtlpReceiver;
  before(async () => {
    // Every party exports its spans with the official OTLP/HTTP exporter to this loopback receiver.
    receiver = await otlpReceiver();
    run = await runCrossProtocol({ graceMs: 60_000, otlpEndpoint: receiver.url }); // only the children can release the answer
  });
  after(async () => {
    await receiver?.close();
  });

  it("a single session/cancel reaches all four; each counterpart's work stops; the prompt is answered cancelled once, after the children settled; every table is empty", () => {
    assert.equal(run.abp, chromium);
    assert.equal(run.childrenBeforeStop, chromium ? 4 : 3, "one child job per protocol under the turn");

    // Each binding sent its own protocol's cancel, once. The MCP call is a task: tasks/cancel, and the
    // tasks/result wait is dropped with notifications/cancelled (the task-augmented tools/call never is).
    assert.deepEqual(sentAfterStop(run, "MCP").sort(), ["notifications/cancelled (tasks/result)", "tasks/cancel"]);
    assert.deepEqual(sentAfterStop(run, "RAP"), ["POST /cancel_tool_call"]);
    assert.equal(afterStop(run, /^(tasks\/cancel|CancelTask) /, "A2A").filter((e) => e.kind === "message").length, 1, "one A2A cancel reached the agent");
    assert.deepEqual(
      afterStop(run, /cancel .*\? allow$/, "AOS").map((e) => (e.kind === "message" ? e.from : "")),
      ["agent", "a2a-agent"],
      "the guardian allowed it at both hooks",
    );
    if (chromium) assert.deepEqual(sentAfterStop(run, "ABP"), ["capabilities/cancel"]);

    // Each counterpart's work stopped.
    assert.equal(afterStop(run, /^tasks\/cancel answered cancelled$/, "MCP").length, 1, "the MCP task was cancelled at the tasks/cancel answer");
    assert.equal(afterStop(run, new RegExp(`^task ${run.mcp.taskId?.slice(0, 8)} child process ${run.mcp.pid} ended SIGTERM$`), "MCP").length, 1);
    assert.equal(run.mcp.stillRunning, false, "the MCP task's child process is gone (ESRCH)");
    assert.equal(run.mcp.status, "cancelled", "the MCP task stays cancelled after its work ended");
    assert.ok(run.rap.pid !== undefined);
    assert.equal(run.rap.stillRunning, false, "the RAP child process is gone");
    assert.equal(afterStop(run, /child process \d+ gone/, "RAP").length, 1);
    assert.equal(run.a2a.taskState, 5, "the A2A task is canceled");
    assert.equal(afterStop(run, /work stopped after \d+ paragraphs/, "A2A").length, 1);
    if (chromium) {
      assert.ok(run.after.page !== null && run.pageLater !== null);
      assert.equal(run.after.page.counters.renderAborts, 1, "the page's render aborted");
      assert.equal(run.pageLater.counters.rows, run.after.page.counters.rows, "the page's counter stopped");
      assert.equal(afterStop(run, /capabilities\/cancel-result: cancelled true/, "ABP").length, 1);
    }

    // Answered once, cancelled, after every child settled.
    assert.deepEqual(run.answer, { stopReason: "cancelled" });
    assert.equal(run.promptAnswers, 1);
    assert.equal(afterStop(run, /^session\/prompt answered/, "ACP").filter((e) => e.kind === "note").length, 1, "one answer left the agent");
    assert.equal(run.after.childrenAtAnswer, 0, "no child of any binding was still out when the answer left");
    const a2aAnswered = afterStop(run, /^tasks\/cancel answered: canceled$/, "A2A")[0];
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

  it("the Stop is one OpenTelemetry trace across every process: a span per hop (ACP, MCP, RAP, A2A, ABP), each the child of the previous hop's span, each with a cancel event naming its cause", async () => {
    const services = [...new Set(crossHops(run.abp).map((hop) => hop.service))];
    const spans: ReceivedSpan[] = await eventually(
      () => (services.every((s) => receiver.spans.some((span) => span.service === s)) ? [...receiver.spans] : undefined),
      `spans from ${services.join(", ")}`,
    );
    assert.deepEqual(services.sort(), ["a2a-agent", ...(run.abp ? ["abp-app"] : []), "acp-agent", "editor", "mcp-server", "rap-tool-server"]);
    assert.ok(run.traceId !== undefined);
    const { spans: turn, found, problems } = checkCrossTrace(spans, run.abp, run.traceId);
    assert.deepEqual(problems, []);
    const shape = traceShape(turn);
    assert.equal(shape.roots.length, 1, "one root");
    assert.equal(shape.roots[0]?.service, "editor", "the editor's turn is the root");
    // Every hop's span is in the turn's trace: none started a trace of its own.
    for (const hop of crossHops(run.abp)) {
      const same = (s: ReceivedSpan) => s.service === hop.service && s.name === hop.name && s.kind === hop.kind;
      const elsewhere = spans.filter((s) => s.traceId !== run.traceId && same(s));
      assert.deepEqual(elsewhere, [], `${hop.service}: ${hop.name} only in the turn's trace`);
    }
    // The checks above, spelled out for the hops of the protocols joined last (A2A and ABP).
    const [, agentPrompt, mcpCall, mcpTask, , , a2aLink, a2aTask, abpCall, abpApp] = found;
    assert.equal(mcpTask?.parentSpanId, mcpCall?.spanId, "the MCP task's work joined by the tools/call's _meta");
    assert.equal(mcpTask?.attributes["mcp.task.id"], run.mcp.taskId);
    assert.equal(a2aLink?.parentSpanId, agentPrompt?.spanId);
    assert.equal(a2aTask?.parentSpanId, agentPrompt?.spanId, "the A2A task joined by the message's metadata");
    assert.deepEqual(a2aTask?.events.find((e) => e.name === "cancel")?.attributes, { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" });
    if (run.abp) {
      assert.equal(abpCall?.parentSpanId, agentPrompt?.spanId);
      assert.equal(abpApp?.parentSpanId, abpCall?.spanId, "the page's render joined by the call's options._meta");
      assert.deepEqual(abpApp?.events.find((e) => e.name === "cancel")?.attributes, { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" });
    }
    for (const span of found.slice(1)) assert.equal(span?.status.code, 2, `${span?.service}: ${span?.name} ends ERROR (cancelled)`);
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
        /MCP {2}agent → mcp-server {2}tasks\/cancel$/,
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
      assert.match(mermaid, /P\d+->>P\d+: \[MCP\] tasks\/cancel \(\d+\.\d ms\)/);
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
    assert.equal(afterStop(run, /work stopped/, "A2A").length, 0);
    assert.equal(run.a2a.taskState, 5);
    assert.equal(run.after.childrenAtAnswer, 0, "the answer waited for the A2A child");
    // The other children did not wait for it, and nothing waited for the 60 s ACP grace (the test would time out).
    assert.equal(afterStop(run, /child process \d+ ended SIGTERM/, "MCP").length, 1);
    assert.equal(run.mcp.stillRunning, false);
    assert.equal(run.rap.stillRunning, false);
    assert.deepEqual(run.after.acp, { client: 0, agent: 0 });
    assert.equal(run.after.mcp + run.after.rap + run.rap.registry, 0);
  });
});
