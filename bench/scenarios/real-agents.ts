/**
 * Stop → answer with today's real agents (issue 33): for each installed agent (test/interop/peers,
 * `npm run interop:install`), a held turn against the scripted model is stopped by `session/cancel`,
 * directly and through `acp-cancel bridge`, and the time from the cancel leaving the editor to the
 * `cancelled` answer arriving is taken. The goal: the bridge adds at most 5 ms at the median.
 */
import { performance } from "node:perf_hooks";
import { closeCell } from "../../test/interop/drivers.js";
import { until } from "../../test/interop/harness.js";
import { PEERS_INSTALLED, REAL_AGENTS, type RealAgent } from "../../test/interop/peers.js";
import { openCell, type RealCell, stopReasonOf } from "../../test/interop/real-cells.js";
import type { BenchOptions } from "../lib/options.js";
import { median } from "../lib/stats.js";
import { fmt, goal, type Goal, type ScenarioResult } from "../report/types.js";

const ADDED_MS_GOAL = 5;

/** One Stop of a streaming turn: ms from session/cancel sent to the cancelled answer received. */
async function stopOnce(cell: RealCell): Promise<number> {
  cell.model.script = { kind: "hold" };
  const turn = cell.driver.startPrompt(cell.sessionId, "keep talking");
  const before = cell.model.turns.length;
  await until(() => (cell.model.turns.length > before && cell.model.streaming.length > 0 ? true : undefined), "the model streaming", 60_000);
  const sent = performance.now();
  let answeredAt = Number.NaN;
  void turn.answer.then(() => {
    answeredAt = performance.now();
  });
  cell.driver.cancel(cell.sessionId);
  const answer = await turn.answer;
  if (stopReasonOf(answer) !== "cancelled") throw new Error(`not cancelled: ${JSON.stringify(answer).slice(0, 200)}`);
  // The model request is closed before the next Stop, so that each one starts alike.
  await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the model request closed", 30_000);
  return answeredAt - sent;
}

async function stops(agent: RealAgent, placement: "direct" | "bridge", count: number): Promise<number[]> {
  const cell = await openCell(agent, placement, { script: { kind: "hold" } });
  try {
    await stopOnce(cell); // warm-up
    const samples: number[] = [];
    for (let i = 0; i < count; i++) samples.push(await stopOnce(cell));
    return samples;
  } finally {
    await closeCell(cell);
  }
}

export async function realAgentsScenario(options: BenchOptions): Promise<ScenarioResult> {
  if (!PEERS_INSTALLED) {
    const note = "Not run: the real agents are not installed (npm run interop:install).";
    return { id: "real-agents", title: "Stop → answer with real agents", tables: [{ title: note, columns: [], rows: [] }], goals: [], data: {} };
  }
  const count = options.quick ? 5 : 15;
  const rows: string[][] = [];
  const goals: Goal[] = [];
  const data: Record<string, { direct: number[]; bridge: number[] }> = {};
  // BENCH_REAL_AGENTS=codex-acp,qwen-code measures just those (each agent takes a minute or more).
  const only = process.env.BENCH_REAL_AGENTS?.split(",");
  for (const agent of REAL_AGENTS.filter((a) => only === undefined || only.includes(a.recipe))) {
    const direct = await stops(agent, "direct", count);
    const bridge = await stops(agent, "bridge", count);
    data[agent.recipe] = { direct, bridge };
    const added = median(bridge) - median(direct);
    rows.push([agent.label, fmt.ms(median(direct)), fmt.ms(median(bridge)), fmt.ms(added), String(count)]);
    goals.push(goal({
      id: `stop-answer-bridge-${agent.recipe}`,
      description: `${agent.label}: the bridge adds at most ${ADDED_MS_GOAL} ms to Stop → cancelled answer (p50)`,
      measured: added,
      target: ADDED_MS_GOAL,
      kind: "max",
      unit: "ms",
    }));
  }
  return {
    id: "real-agents",
    title: "Stop → answer with real agents (scripted model)",
    tables: [{
      title: "Stop (session/cancel mid-stream) → cancelled answer, ms, p50",
      columns: ["agent", "direct", "through the bridge", "bridge adds", "stops"],
      rows,
      note: "Each agent against the scripted model on loopback (src/check/model-server); one agent process per placement, one warm-up Stop.",
    }],
    goals,
    data,
  };
}
