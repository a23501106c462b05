import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { median } from "../lib/stats.js";
import { goal, type Goal, type ScenarioResult } from "./types.js";

/** One full run's per-round values, by goal id: a line of bench/results/rounds.jsonl. */
interface RunRounds {
  startedAt: string;
  rounds: Record<string, number[]>;
}

/**
 * Goals with `poolRuns` are judged by the median of their per-round values pooled over the
 * newest `poolRuns` full runs on this machine (bench/results/rounds.jsonl, which every full run
 * appends to). Until that many runs exist, the verdict is this run's and says it is provisional.
 */
export function poolOverRuns(scenarios: ScenarioResult[], file: string, run: RunRounds["startedAt"]): ScenarioResult[] {
  const history: RunRounds[] = existsSync(file)
    ? readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as RunRounds)
    : [];
  const rounds = Object.fromEntries(
    scenarios.flatMap((s) => s.goals).filter((g) => g.rounds !== undefined).map((g) => [g.id, g.rounds as number[]]),
  );
  history.push({ startedAt: run, rounds });
  writeFileSync(file, history.map((line) => JSON.stringify(line)).join("\n") + "\n");
  const pool = (g: Goal): Goal => {
    if (g.poolRuns === undefined) return g;
    const runs = history.filter((line) => line.rounds[g.id] !== undefined).slice(-g.poolRuns);
    const values = runs.flatMap((line) => line.rounds[g.id] ?? []);
    const { pass: _pass, interval, ...spec } = g;
    const measured = runs.length >= g.poolRuns ? median(values) : g.measured;
    return { ...goal({ ...spec, measured, interval }), pooled: { runs: runs.length, rounds: values.length } };
  };
  return scenarios.map((s) => ({ ...s, goals: s.goals.map(pool) }));
}
