/** Prints a cross-protocol run: per protocol, what was sent after Stop and when the work stopped. */
import type { CrossEvent, Protocol } from "./events.js";
import { CHROMIUM, type CrossRun } from "./session.js";

const ms = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} ms`;
const ORDER: Protocol[] = ["ACP", "MCP", "RAP", "A2A", "AOS", "ABP"];

export function printRun(run: CrossRun, write: (line: string) => void, abpSkipped = `no Chromium at ${CHROMIUM} (apt-get install chromium to include it)`): void {
  const at = (event: CrossEvent) => ms(event.at - run.stopAt);
  write("One Stop reaches everything: an ACP turn working in MCP, RAP, A2A and ABP at once.\n");
  if (!run.abp) write(`  ABP skipped: ${abpSkipped}.\n`);
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
