/**
 * The Stop verdicts of today's agents, per `acp-cancel check` cell, directly and through the bridge:
 * the one table the interop suite and check are held to. real-agents.test.ts takes from it which
 * direct cells are the agent's defect (and asserts that defect's effect); check-agrees.test.ts runs
 * `acp-cancel check --model-server` on each agent and asserts check's verdicts are these.
 */
import type { AgentName } from "../../src/check/index.js";
import type { Scorecard } from "../../src/check/scorecard.js";

/** check's scenarios (src/check/scenarios.ts; check-agrees.test.ts asserts the list is the same). */
export const CHECK_CELLS = [
  "session/cancel",
  "$/cancel_request",
  "cancel right after the prompt",
  "stdin closed mid-turn",
  "SIGTERM mid-turn",
  "session/cancel while a tool runs",
  "session/cancel with a dialog open",
  "next prompt after a cancel",
] as const;
export type CheckCell = (typeof CHECK_CELLS)[number];

/**
 * The suite's cells that establish each check cell's verdict (titles shortened; "v2:" is
 * real-agents-v2.test.ts, the rest real-agents.test.ts). The exit cells have no suite cell of
 * their own: check-agrees.test.ts is where the real agents' exits are asserted.
 */
export const ASSERTED_BY: Record<CheckCell, string> = {
  "session/cancel": "Stop by session/cancel mid-stream …; v2: Stop by session/cancel mid-stream …",
  "$/cancel_request": "Stop by $/cancel_request mid-stream …; v2: $/cancel_request for a prompt queued behind a running turn …",
  "cancel right after the prompt": "a cancel right after the prompt, before the model's first byte …; v2: a prompt and session/cancel sent together …",
  "stdin closed mid-turn": "none: check-agrees.test.ts (the agent's process exits)",
  "SIGTERM mid-turn": "none: check-agrees.test.ts (the agent's process exits)",
  "session/cancel while a tool runs": "Stop while a shell tool runs …",
  "session/cancel with a dialog open": "Stop with a permission dialog open …",
  "next prompt after a cancel": "Stop by session/cancel mid-stream … and the next prompt shows the model's text; v2: the same",
};

/**
 * The direct cells each agent fails, and why (docs/interop.md). Every other cell holds directly, and
 * every cell holds through the bridge.
 */
const FAILS_DIRECTLY: Record<AgentName, Partial<Record<CheckCell, string>>> = {
  // codex keeps an interrupted exec_command alive on purpose (openai/codex #42717, #7985, #26382).
  "codex-acp": { "session/cancel while a tool runs": "the tool survives the cancel and writes its file" },
  "claude-agent-acp": {},
  "claude-agent-acp-v2": { "$/cancel_request": "a queued prompt is not withdrawn: no answer" },
  "gemini-cli": {
    "$/cancel_request": "ignored: no answer, the model stream stays open",
    "stdin closed mid-turn": "it does not exit when its stdin closes mid-turn",
  },
  "qwen-code": { "$/cancel_request": "ignored: no answer, the model stream stays open" },
  // opencode 1.18.33: no $/cancel_request (its PR #49563 came later); an early session/cancel is lost.
  "opencode": {
    "$/cancel_request": "ignored: no answer, the model stream stays open",
    "cancel right after the prompt": "not answered cancelled: no answer, or -32603",
  },
  // copilot-cli 1.0.102: no $/cancel_request; a session/cancel written right behind its prompt is often lost.
  "copilot-cli": {
    "$/cancel_request": "ignored: no answer, the model stream stays open",
    "cancel right after the prompt": "lost when it follows the prompt at once: no answer, the model request open",
  },
};

/**
 * Direct defects that are races inside the agent: check, which sends its Stop at once, has seen
 * them both ways, while the suite forces the losing order. Check may give either verdict there.
 */
const RACES_DIRECTLY: Partial<Record<AgentName, Partial<Record<CheckCell, string>>>> = {
  // Two check runs on 2026-11-29: lost once (as the suite asserts), answered cancelled in 882 ms once (load 5-8).
  "opencode": { "cancel right after the prompt": "lost only when it arrives before the prompt's turn has started" },
  // The suite's probes (2026-11-29): lost 5 of 13 times when written right behind the prompt, never 1-15 ms later.
  "copilot-cli": { "cancel right after the prompt": "lost only when it follows the prompt at once" },
};

/**
 * Cells that cannot run for an agent, and why: check shows them "–". None today; a reason must say
 * what the agent lacks (e.g. "offers no shell tool"), never "needs a model".
 */
const CANNOT_RUN: Partial<Record<AgentName, Partial<Record<CheckCell, string>>>> = {};

export type Expected = { verdict: "pass" } | { verdict: "fail"; why: string } | { verdict: "skip"; why: string };

/** The verdict of `cell` for `agent` in `placement`. */
export function expected(agent: AgentName, cell: CheckCell, placement: "direct" | "bridge"): Expected {
  const cannot = CANNOT_RUN[agent]?.[cell];
  if (cannot !== undefined) return { verdict: "skip", why: cannot };
  const defect = placement === "direct" ? FAILS_DIRECTLY[agent][cell] : undefined;
  return defect === undefined ? { verdict: "pass" } : { verdict: "fail", why: defect };
}

/** Whether the agent fails `cell` on its own (the suite then asserts the defect's effect). */
export const failsDirectly = (agent: AgentName, cell: CheckCell) => expected(agent, cell, "direct").verdict === "fail";

/** Where check's scorecard of `agent` differs from the table, one line per cell (none: they agree). */
export function disagreements(agent: AgentName, card: Scorecard): string[] {
  const found: string[] = [];
  for (const cell of CHECK_CELLS) {
    for (const placement of ["direct", "bridge"] as const) {
      const want = expected(agent, cell, placement);
      const got = card.cells.find((c) => c.scenario === cell && c.placement === placement);
      if (got === undefined) found.push(`${cell}, ${placement}: check has no such cell`);
      else if (got.verdict !== want.verdict && !(placement === "direct" && got.verdict !== "skip" && RACES_DIRECTLY[agent]?.[cell] !== undefined)) {
        const why = got.verdict === "skip" && want.verdict === "pass" ? "; verdicts.ts gives no reason it cannot run" : "";
        const said = [got.outcome, got.note].filter((part) => part !== "").join(": ");
        found.push(`${cell}, ${placement}: check ${got.verdict} (${said})${why}, the suite ${want.verdict} [${ASSERTED_BY[cell]}]`);
      }
    }
  }
  return found;
}
