import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../lib/paths.js";
import { type RunInfo, resultsMarkdown, spliceResults } from "./markdown.js";
import { ratioChart } from "./svg.js";
import type { ScenarioResult } from "./types.js";

/**
 * Writes bench/results/latest.json and latest.md (every table), the results section of
 * docs/benchmarks.md (the goals) and docs/benchmarks.svg.
 */
export function writeReport(
  info: RunInfo,
  scenarios: ScenarioResult[],
  target: { json: string; docs: boolean } = { json: "latest.json", docs: true },
): { json: string; doc?: string; svg?: string } {
  const json = join(REPO, "bench", "results", target.json);
  const doc = join(REPO, "docs", "benchmarks.md");
  const svg = join(REPO, "docs", "benchmarks.svg");
  mkdirSync(join(REPO, "bench", "results"), { recursive: true });
  writeFileSync(json, `${JSON.stringify({ info, scenarios }, null, 2)}\n`);
  writeFileSync(json.replace(/\.json$/, ".md"), `# Benchmark results\n\n${resultsMarkdown(info, scenarios, true)}\n`);
  if (!target.docs) return { json };
  let page = "# Benchmarks\n";
  try {
    page = readFileSync(doc, "utf8");
  } catch {
    // First run: the page is created with just the results.
  }
  writeFileSync(doc, spliceResults(page, resultsMarkdown(info, scenarios)));
  const goals = scenarios.flatMap((s) => s.goals);
  writeFileSync(
    svg,
    ratioChart(goals, `${info.mode} run, ${info.startedAt}, node ${info.node}, ${info.cpus}`),
  );
  return { json, doc, svg };
}
