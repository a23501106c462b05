/** Prints a cross-protocol run: per protocol, what was sent after Stop and when the work stopped. */
import { type CrossEvent, type Protocol, WORK_ENDED } from "./events.js";
import { CHROMIUM, type CrossRun } from "./session.js";

const ms = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} ms`;
const ORDER: Protocol[] = ["ACP", "MCP", "RAP", "A2A", "AOS", "ABP"];
const listed = (items: string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1) ?? ""}`);

/** The protocols the turn's work runs over in this run: ABP only when the browser part ran. */
export const protocolsOf = (run: CrossRun): Protocol[] => ["MCP", "RAP", "A2A", ...(run.abp ? (["ABP"] as const) : [])];

/**
 * What the run shows, said only as far as its events show it: when the turn was answered, which
 * work ended after that answer (by its own timestamp), and what was still running when last looked at.
 */
export function printOutcome(run: CrossRun, write: (line: string) => void): void {
  const since = (at: number) => ms(at - run.stopAt);
  const ended = run.events.filter((e) => e.kind === "note" && e.at >= run.stopAt && WORK_ENDED.test(e.label));
  const afterAnswer = ended.filter((e) => e.at > run.answeredAt);
  const settled = run.after.childrenAtAnswer === 0 ? `, once every call the agent made for it (${listed(protocolsOf(run))}) had settled` : "";
  write(`The turn was answered ${JSON.stringify(run.answer)} once, at ${since(run.answeredAt)}${settled}.`);
  if (afterAnswer.length === 0) {
    const last = ended.at(-1);
    write(`Every piece of work had stopped before the answer${last === undefined ? "" : ` (the last at ${since(last.at)})`}.`);
  } else {
    write(`Stopped after the answer: ${afterAnswer.map((e) => `${e.protocol} ${e.label} at ${since(e.at)}`).join("; ")}.`);
    write("(A call settles when it is cancelled; the server that ran a process for it stops that process on its own time.)");
  }
  const left = run.after.acp.client + run.after.acp.agent + run.after.mcp + run.after.rap + run.after.abp + run.a2a.running +
    Number(run.mcp.stillRunning) + Number(run.rap.stillRunning);
  write(left === 0 ? `Nothing was left running at ${since(run.lookedAt)}, when the demo last looked.` : `${left} piece(s) of work were still running at ${since(run.lookedAt)}.`);
}

export function printRun(run: CrossRun, write: (line: string) => void, abpSkipped = `no Chromium at ${CHROMIUM} (apt-get install chromium to include it)`): void {
  const at = (event: CrossEvent) => ms(event.at - run.stopAt);
  write(`One Stop reaches everything: an ACP turn working in ${listed(protocolsOf(run))} at once.\n`);
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
