/**
 * Stop → answer with today's real agents (issue 33): for each installed agent (test/interop/peers,
 * `npm run interop:install`), a held turn against the scripted model is stopped by `session/cancel`,
 * directly and through `acp-cancel bridge`, and the time from the cancel leaving the editor to the
 * `cancelled` answer arriving is taken. The goal: the bridge adds at most 5 ms at the median.
 *
 * The placements run side by side (an agent process each, each with its own model) and their Stops
 * alternate in a rotating order, so that a slow phase of a shared machine falls on all of them.
 *
 *   BENCH_REAL_AGENTS=codex-acp,qwen-code   just those agents (each takes a minute or more)
 *   BENCH_REAL_STOPS=60                     Stops per placement (default 10 quick, 30 full)
 *   BENCH_REAL_RELAY=1                      also behind a byte relay (bench/peers/byte-relay.ts)
 *   BENCH_BRIDGE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"   node flags for the bridge process
 *   BENCH_BRIDGE_ARGS="--emulate agent"     more bridge flags
 */
import { performance } from "node:perf_hooks";
import { closeCell, wireDriver } from "../../test/interop/drivers.js";
import { until } from "../../test/interop/harness.js";
import { PEERS_INSTALLED, REAL_AGENTS, type RealAgent } from "../../test/interop/peers.js";
import { BRIDGE_ARGS, handshakeOf, prepareCell, type RealCell, stopReasonOf } from "../../test/interop/real-cells.js";
import { rotated } from "../lib/interleave.js";
import type { BenchOptions } from "../lib/options.js";
import { CLI, peer } from "../lib/paths.js";
import { median, medianInterval, percentile } from "../lib/stats.js";
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

type Placement = "direct" | "relay" | "bridge";

/**
 * The agent with a session open: directly, behind a process that only copies bytes (the cost of
 * any process in between, on this machine), or behind the bridge. The bench starts the bridge
 * itself, so that it runs as users run it, without a trace file, and so that node flags can be
 * passed to it.
 */
async function openPlacement(agent: RealAgent, placement: Placement): Promise<RealCell> {
  const { model, home, marker, recipe, command, env } = await prepareCell(agent, { script: { kind: "hold" } });
  const words = (name: string) => process.env[name]?.split(" ").filter((a) => a !== "") ?? [];
  const [nodeArgs, bridgeArgs] = [words("BENCH_BRIDGE_NODE_ARGS"), words("BENCH_BRIDGE_ARGS")];
  const agentArgs = [command.command, ...command.args];
  const run = placement === "direct"
    ? command
    : placement === "relay"
      ? { command: process.execPath, args: [peer("byte-relay"), "--own-session", ...agentArgs] }
      : { command: process.execPath, args: [...nodeArgs, CLI, "bridge", ...BRIDGE_ARGS, ...bridgeArgs, "--", ...agentArgs] };
  const driver = wireDriver("direct", run, env, home);
  const sessionId = await driver.open(handshakeOf(recipe), home);
  return { driver, model, marker, home, recipe, sessionId };
}

/** `count` Stops in each placement, one of each per round in a rotating order, after one warm-up Stop each. */
async function sideBySide(agent: RealAgent, placements: Placement[], count: number): Promise<Map<Placement, number[]>> {
  const cells = new Map<Placement, RealCell>();
  try {
    for (const placement of placements) cells.set(placement, await openPlacement(agent, placement));
    for (const cell of cells.values()) await stopOnce(cell);
    const samples = new Map<Placement, number[]>(placements.map((p) => [p, []]));
    for (let round = 0; round < count; round++) {
      for (const placement of rotated(placements, round)) {
        samples.get(placement)?.push(await stopOnce(cells.get(placement) as RealCell));
      }
    }
    return samples;
  } finally {
    for (const cell of cells.values()) await closeCell(cell);
  }
}

export async function realAgentsScenario(options: BenchOptions): Promise<ScenarioResult> {
  if (!PEERS_INSTALLED) {
    const note = "Not run: the real agents are not installed (npm run interop:install).";
    return { id: "real-agents", title: "Stop → answer with real agents", tables: [{ title: note, columns: [], rows: [] }], goals: [], data: {} };
  }
  const count = Number(process.env.BENCH_REAL_STOPS ?? (options.quick ? 10 : 30));
  if (!Number.isInteger(count) || count < 1) throw new Error(`BENCH_REAL_STOPS takes a whole number of Stops, got '${process.env.BENCH_REAL_STOPS}'`);
  const rows: string[][] = [];
  const goals: Goal[] = [];
  const data: Record<string, { direct: number[]; bridge: number[]; relay?: number[] }> = {};
  const placements: Placement[] = process.env.BENCH_REAL_RELAY === "1" ? ["direct", "relay", "bridge"] : ["direct", "bridge"];
  const only = process.env.BENCH_REAL_AGENTS?.split(",");
  for (const agent of REAL_AGENTS.filter((a) => only === undefined || only.includes(a.recipe))) {
    const samples = await sideBySide(agent, placements, count);
    const [direct, bridge, relay] = [samples.get("direct") ?? [], samples.get("bridge") ?? [], samples.get("relay")];
    data[agent.recipe] = { direct, bridge, ...(relay === undefined ? {} : { relay }) };
    const added = median(bridge) - median(direct);
    // The spread: where the median of the paired differences (each pair seconds apart) lies, at 95%.
    const paired = medianInterval(bridge.map((b, i) => b - (direct[i] as number)));
    rows.push([
      agent.label,
      fmt.ms(median(direct)), fmt.ms(percentile(direct, 90)),
      fmt.ms(median(bridge)), fmt.ms(percentile(bridge, 90)),
      fmt.ms(added),
      paired === undefined ? "n/a" : `${fmt.ms(paired.low)} to ${fmt.ms(paired.high)}`,
      relay === undefined ? "not run" : fmt.ms(median(relay) - median(direct)),
      String(count),
    ]);
    goals.push(goal({
      id: `stop-answer-bridge-${agent.recipe}`,
      description: `${agent.label}: the bridge adds at most ${ADDED_MS_GOAL} ms to Stop → cancelled answer (p50)`,
      measured: added,
      target: ADDED_MS_GOAL,
      kind: "max",
      unit: "ms",
      interval: paired,
    }));
  }
  return {
    id: "real-agents",
    title: "Stop → answer with real agents (scripted model)",
    tables: [{
      title: "Stop (session/cancel mid-stream) → cancelled answer, ms",
      columns: ["agent", "direct p50", "direct p90", "bridge p50", "bridge p90", "bridge adds (p50)", "paired Δ, 95%", "a byte relay adds (p50)", "stops"],
      rows,
      note: "Each agent against the scripted model on loopback (src/check/model-server). Direct and bridge run side by side, " +
        "their Stops alternating; one warm-up Stop each. Paired Δ: where the median of the per-pair differences lies, at 95%.",
    }],
    goals,
    data,
  };
}
