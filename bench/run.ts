/**
 * acp-cancel benchmarks: every figure is a ratio against anchors measured in the same run,
 * interleaved round by round, medians over rounds.
 *
 *   npm run bench             # the full run (a few minutes)
 *   npm run bench -- --quick  # under a minute, fewer and shorter rounds
 *   npm run bench -- --only rap [--quick]  # the scenarios whose name contains "rap"; writes
 *                             # only bench/results/only-rap.json (the docs keep the full run)
 *
 * Writes bench/results/latest.json, the results section of docs/benchmarks.md and
 * docs/benchmarks.svg.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { REPO } from "./lib/paths.js";
import { benchOptions } from "./lib/options.js";
import { formatValue, type ScenarioResult, verdict } from "./report/types.js";
import { writeReport } from "./report/write.js";
import { cancelLatencyScenario } from "./scenarios/cancel-latency.js";
import { cascadeScenario } from "./scenarios/cascade.js";
import { echoScenario } from "./scenarios/echo.js";
import { rawEchoScenario } from "./scenarios/echo-raw.js";
import { engineCostScenario } from "./scenarios/engine-cost.js";
import { memoryScenario } from "./scenarios/memory.js";
import { a2aScenario } from "./scenarios/a2a.js";
import { abpScenario } from "./scenarios/abp.js";
import { rapScenario } from "./scenarios/rap.js";
import { crossScenario } from "./scenarios/cross.js";

const options = benchOptions(process.argv.slice(2));
const SCENARIOS = [
  { name: "echo (SDK apps over stdio)", run: echoScenario },
  { name: "raw echo (bridge vs relay)", run: rawEchoScenario },
  { name: "cancel latency", run: cancelLatencyScenario },
  { name: "cascade", run: cascadeScenario },
  { name: "memory", run: memoryScenario },
  { name: "engine cost and scaling", run: engineCostScenario },
  { name: "rap", run: rapScenario },
  { name: "a2a guard", run: a2aScenario },
  { name: "abp (headless Chromium)", run: abpScenario },
  { name: "cross protocol", run: crossScenario },
];
// --only NAME: run the scenarios whose name contains NAME; a partial run leaves docs/benchmarks.md alone.
const onlyIndex = process.argv.indexOf("--only");
const only = onlyIndex === -1 ? undefined : (process.argv[onlyIndex + 1] ?? "");
const selected = only === undefined ? SCENARIOS : SCENARIOS.filter((s) => s.name.includes(only));
if (selected.length === 0) throw new Error(`--only ${only}: no scenario name contains it`);

const started = performance.now();
const startedAt = new Date().toISOString().replace(/\.\d+Z$/, "Z");
const loadAverage = loadavg()
  .map((l) => l.toFixed(2))
  .join(" ");
const results: ScenarioResult[] = [];
let failed = false;
for (const scenario of selected) {
  const t0 = performance.now();
  process.stderr.write(`bench: ${scenario.name}…`);
  try {
    results.push(await scenario.run(options));
    process.stderr.write(` ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    failed = true;
    process.stderr.write(
      ` FAILED\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    results.push({
      id: scenario.name,
      title: `${scenario.name} (failed)`,
      tables: [{ title: "error", columns: ["error"], rows: [[String(error)]] }],
      goals: [],
      data: { error: String(error) },
    });
  }
}

if (only !== undefined) {
  for (const table of results.flatMap((r) => r.tables)) {
    const rows = [table.columns, ...table.rows].map((row) => row.join(" | ")).join("\n");
    process.stdout.write(`\n${table.title}\n${rows}\n${table.note ?? ""}\n`);
  }
}

const cpuList = cpus();
const files = only !== undefined
  ? writeOnly(only, results)
  : writeReport(
      {
        mode: options.quick ? "quick" : "full",
        startedAt,
        seconds: (performance.now() - started) / 1000,
        node: process.versions.node,
        cpus: `${cpuList.length} × ${cpuList[0]?.model.trim() ?? "cpu"}`,
        loadAverage,
      },
      results,
    );
for (const g of results.flatMap((r) => r.goals)) {
  const target = `${g.kind === "max" ? "<=" : ">="} ${formatValue(g.target, g.unit)}`;
  process.stdout.write(
    `${verdict(g).padEnd(14)} ${formatValue(g.measured, g.unit).padStart(10)}  (${target})  ${g.description}\n`,
  );
}
process.stdout.write(`\nwrote ${files.json}\n      ${files.doc}\n      ${files.svg}\n`);
process.stdout.write(`took ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
process.exitCode = failed ? 1 : 0;

/** A partial run leaves the docs alone: its results go to bench/results/only-<name>.json. */
function writeOnly(name: string, scenarios: ScenarioResult[]): { json: string; doc: string; svg: string } {
  const json = join(REPO, "bench", "results", `only-${name.replace(/[^a-z0-9-]+/gi, "_")}.json`);
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify({ startedAt, scenarios }, null, 2)}\n`);
  return { json, doc: "(not written: partial run)", svg: "(not written: partial run)" };
}
