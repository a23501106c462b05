/**
 * `npm run demo:cross`: one Stop reaches everything. An ACP agent (SDK 2.4.0, one line of
 * acp-cancel) whose turn is at once calling an MCP tool, running a RAP tool call (a child
 * process on an HTTP tool server), waiting on an A2A task (behind an AOS guardian) and
 * rendering in a browser app over ABP. The editor presses Stop; the demo prints, per protocol,
 * what was sent and when the work stopped, and writes a trace for `acp-cancel trace`.
 *
 *   node build/examples/cross-protocol/run-demo.js [--trace FILE]
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrossEvent, Protocol } from "./events.js";
import { CHROMIUM, type CrossRun, runCrossProtocol } from "./session.js";
import { toTrace } from "./trace.js";

const ms = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} ms`;
const ORDER: Protocol[] = ["ACP", "MCP", "RAP", "A2A", "AOS", "ABP"];

export function printRun(run: CrossRun, write: (line: string) => void): void {
  const at = (event: CrossEvent) => ms(event.at - run.stopAt);
  write("One Stop reaches everything: an ACP turn working in MCP, RAP, A2A and ABP at once.\n");
  if (!run.abp) write(`  ABP skipped: no Chromium at ${CHROMIUM} (apt-get install chromium to include it).\n`);
  for (const protocol of ORDER) {
    const mine = run.events.filter((e) => e.protocol === protocol && e.at >= run.stopAt - 0.001);
    if (mine.length === 0) continue;
    write(`${protocol}`);
    for (const event of mine) {
      const who = event.kind === "message" ? `${event.from} → ${event.to}` : event.party;
      write(`  ${at(event).padStart(11)}  ${who.padEnd(28)} ${event.label}`);
    }
  }
  write("");
  write(`Prompt answered ${JSON.stringify(run.answer)} ${ms(run.answeredAt - run.stopAt)} after Stop (${run.promptAnswers} answer).`);
  write(
    `Left in flight: ACP ${run.after.acp.client + run.after.acp.agent}, MCP ${run.after.mcp}, RAP ${run.after.rap} (tool server ${run.rap.registry}), ` +
    `A2A ${run.a2a.running} running (task state ${String(run.a2a.taskState)} = canceled), ABP ${run.after.abp}.`,
  );
  if (run.after.page !== null && run.pageLater !== null) {
    write(`ABP page rows rendered: ${run.after.page.counters.rows} at the answer, ${run.pageLater.counters.rows} 150 ms later (aborted renders: ${run.pageLater.counters.renderAborts}).`);
  }
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "")) {
  const index = process.argv.indexOf("--trace");
  const traceFile = index === -1 ? join(tmpdir(), "acp-cancel-cross.trace.jsonl") : (process.argv[index + 1] ?? "");
  const run = await runCrossProtocol();
  printRun(run, (line) => process.stdout.write(`${line}\n`));
  writeFileSync(traceFile, toTrace(run.events));
  process.stdout.write(`\nTrace: ${traceFile}\n  acp-cancel trace ${traceFile}            (timeline)\n  acp-cancel trace ${traceFile} --mermaid  (sequence diagram)\n`);
}
