/** Prints a cross-protocol run: per protocol, what was sent after Stop and when the work stopped. */
import type { CrossEvent, Protocol } from "./events.js";
import { CHROMIUM, type CrossRun } from "./session.js";

const ms = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} ms`;
const ORDER: Protocol[] = ["ACP", "MCP", "RAP", "A2A", "AOS", "ABP"];

export function printRun(run: CrossRun, write: (line: string) => void, abpSkipped = `no Chromium at ${CHROMIUM} (apt-get install chromium to include it)`): void {
  const at = (event: CrossEvent) => ms(event.at - run.stopAt);
  write("One Stop reaches everything: an ACP turn working in MCP, RAP, A2A and ABP at once.\n");
  if (!run.abp) write(`  (ABP, the browser-app protocol, is not part of this run: ${abpSkipped}.)\n`);
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
    `Still in flight after the answer: ACP requests ${run.after.acp.client + run.after.acp.agent}, MCP calls ${run.after.mcp}, ` +
    `RAP calls ${run.after.rap} (on the tool server ${run.rap.registry}), A2A tasks running ${run.a2a.running} ` +
    `(the task ended ${run.a2a.taskState === 5 ? "canceled" : `in state ${String(run.a2a.taskState)}`}), ABP calls ${run.after.abp}.`,
  );
  write(
    `MCP task ${run.mcp.taskId?.slice(0, 8) ?? "?"}: status ${run.mcp.status ?? "?"} after the answer; its child process ${run.mcp.pid} ` +
    `${run.mcp.stillRunning ? "STILL RUNNING" : "gone (kill(pid, 0): ESRCH)"}.`,
  );
  if (run.after.page !== null && run.pageLater !== null) {
    write(`ABP page rows rendered: ${run.after.page.counters.rows} at the answer, ${run.pageLater.counters.rows} 150 ms later (aborted renders: ${run.pageLater.counters.renderAborts}).`);
  }
}
