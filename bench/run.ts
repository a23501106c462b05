/**
 * acp-cancel benchmarks: every figure is a ratio against anchors measured in the same run,
 * interleaved round by round, medians over rounds.
 *
 *   npm run bench             # the full run (a few minutes)
 *   npm run bench -- --quick  # under a minute, fewer and shorter rounds
 *   npm run bench -- --quick --only echo-raw,cancel   # just these scenarios (ids or names)
 *
 * Writes bench/results/latest.json and latest.md, the results section of docs/benchmarks.md and
 * docs/benchmarks.svg.
 */
import { Socket } from "node:net";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { REPO } from "./lib/paths.js";
import { benchOptions } from "./lib/options.js";
import { formatValue, intervalText, isOpen, type ScenarioResult, verdict } from "./report/types.js";
import { poolOverRuns } from "./report/pool.js";
import { writeReport } from "./report/write.js";
import { cancelLatencyScenario } from "./scenarios/cancel-latency.js";
import { cascadeScenario } from "./scenarios/cascade.js";
import { echoScenario } from "./scenarios/echo.js";
import { rawEchoScenario } from "./scenarios/echo-raw.js";
import { engineCostScenario } from "./scenarios/engine-cost.js";
import { memoryScenario } from "./scenarios/memory.js";
import { a2aScenario } from "./scenarios/a2a.js";
import { abpScenario } from "./scenarios/abp.js";
import { crossScenario } from "./scenarios/cross.js";
import { mcpTasksScenario } from "./scenarios/mcp-tasks.js";
import { rapScenario } from "./scenarios/rap.js";
import { replicasScenario } from "./scenarios/replicas.js";
import { realAgentsScenario } from "./scenarios/real-agents.js";

const options = benchOptions(process.argv.slice(2));
const ALL_SCENARIOS = [
  { id: "echo", name: "echo (SDK apps over stdio)", run: echoScenario },
  { id: "echo-raw", name: "raw echo (bridge vs relay)", run: rawEchoScenario },
  { id: "cancel", name: "cancel latency", run: cancelLatencyScenario },
  { id: "cascade", name: "cascade", run: cascadeScenario },
  { id: "memory", name: "memory", run: memoryScenario },
  { id: "engine", name: "engine cost and scaling", run: engineCostScenario },
  { id: "rap", name: "rap", run: rapScenario },
  { id: "a2a", name: "a2a guard", run: a2aScenario },
  { id: "abp", name: "abp (headless Chromium)", run: abpScenario },
  { id: "cross", name: "cross protocol", run: crossScenario },
  { id: "mcp-tasks", name: "mcp tasks", run: mcpTasksScenario },
  { id: "replicas", name: "replicas (PostgreSQL, Redis)", run: replicasScenario },
  { id: "real-agents", name: "real agents (Stop → answer)", run: realAgentsScenario },
];
const only = options.only;
const SCENARIOS =
  only === undefined ? ALL_SCENARIOS : ALL_SCENARIOS.filter((s) => only.includes(s.id) || only.includes(s.name));
const unknown = only?.filter((o) => !ALL_SCENARIOS.some((s) => s.id === o || s.name === o)) ?? [];
if (unknown.length > 0) {
  throw new Error(`--only: no scenario ${unknown.join(", ")} (ids: ${ALL_SCENARIOS.map((s) => s.id).join(", ")})`);
}

const started = performance.now();
const startedAt = new Date().toISOString().replace(/\.\d+Z$/, "Z");
const loadAverage = loadavg()
  .map((l) => l.toFixed(2))
  .join(" ");
let results: ScenarioResult[] = [];
let failed = false;
for (const scenario of SCENARIOS) {
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

// A full run of every scenario adds its rounds to the pool; goals at 1 in flight are judged over it.
if (!options.quick && only === undefined) {
  results = poolOverRuns(results, join(REPO, "bench", "results", "rounds.jsonl"), startedAt);
}

const cpuList = cpus();
const files = writeReport(
  {
    mode: options.quick ? "quick" : "full",
    startedAt,
    seconds: (performance.now() - started) / 1000,
    node: process.versions.node,
    cpus: `${cpuList.length} × ${cpuList[0]?.model.trim() ?? "cpu"}`,
    loadAverage,
  },
  results,
  // A partial run must not replace the full results on the docs page.
  { json: only === undefined ? "latest.json" : "only.json", docs: only === undefined },
);
for (const g of results.flatMap((r) => r.goals)) {
  const target = `${g.kind === "max" ? "<=" : ">="} ${formatValue(g.target, g.unit)}`;
  process.stdout.write(
    `${verdict(g).padEnd(14)} ${formatValue(g.measured, g.unit).padStart(10)}  (${target})  ${g.description}` +
    `${g.interval === undefined ? "" : `  [95%: ${intervalText(g)}${isOpen(g) ? ", open" : ""}]`}\n`,
  );
}
process.stdout.write(`\nwrote ${[files.json, files.doc, files.svg].filter((f) => f !== undefined).join("\n      ")}\n`);
process.stdout.write(`took ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
/** Handles still open, less the run's own stdout and stderr (each a TTY, a pipe or a file). */
function openHandles(): string[] {
  const left = process.getActiveResourcesInfo().filter((kind) => kind !== "Timeout");
  for (const stream of [process.stdout, process.stderr]) {
    const kind = stream.isTTY ? "TTYWrap" : stream instanceof Socket ? "PipeWrap" : undefined;
    const at = kind === undefined ? -1 : left.indexOf(kind);
    if (at !== -1) left.splice(at, 1);
  }
  return left;
}
// A scenario that leaves a handle open (a server not closed) must not hold CI: name what is
// left, then end the run. A handle being closed is still listed until the loop's next close
// phase, so closing ones get up to a second to go.
for (let waited = 0; openHandles().length > 0 && waited < 1000; waited += 10) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const left = openHandles();
if (left.length > 0) process.stderr.write(`bench: handles still open at the end (a scenario leaks): ${left.join(", ")}\n`);
process.exit(failed ? 1 : 0);
