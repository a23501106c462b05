/**
 * What tracing costs per message when no OpenTelemetry SDK is registered. Each cell runs in a
 * process of its own (its own heap and type feedback, so cells cannot slow each other's code),
 * and the processes alternate, in a rotating order, `runs` times:
 * - "before the seam": a build of the engine from before the observer seam, when given;
 * - "seam unset": this engine, no `traceJobs()`;
 * - "seam unset (A/A)": the same again, the method's noise floor;
 * - "traceJobs(), no SDK": this engine after `traceJobs()` on the API's no-op global tracer.
 * A process prints the median ns per message over its rounds; the figure of a cell is the median
 * over runs of its ratio to the first cell in the same run, with a 95% interval.
 *
 *   node build/bench/engine/otel-cost.js [BASE_BUILD_DIR/src/index.js|-] [runs] [pairs] [rounds]
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CancelEngine } from "../../src/index.js";
import { traceJobs } from "../../src/otel/index.js";
import { rotated } from "../lib/interleave.js";
import { median, medianInterval } from "../lib/stats.js";
import { ECHO, timePairs } from "./time-pairs.js";

type EngineClass = typeof CancelEngine;
const CELLS = ["before the seam", "seam unset", "seam unset (A/A)", "traceJobs(), no SDK"] as const;
type CellName = (typeof CELLS)[number];

/** In a child: times one cell and prints its median ns per message. */
async function measureCell(cell: CellName, baseEntry: string, pairs: number, rounds: number): Promise<void> {
  const Engine = cell === "before the seam"
    ? ((await import(pathToFileURL(baseEntry).href)) as { CancelEngine: EngineClass }).CancelEngine
    : CancelEngine;
  const stop = cell === "traceJobs(), no SDK" ? traceJobs() : () => {};
  const engine = new Engine(() => {});
  const samples: number[] = [];
  for (let round = -3; round < rounds; round++) {
    const ns = timePairs(engine as CancelEngine, pairs, ECHO);
    if (round >= 0) samples.push(ns);
  }
  stop();
  process.stdout.write(`${median(samples)}\n`);
}

function drive(baseEntry: string, runs: number, pairs: number, rounds: number): void {
  const cells = CELLS.filter((cell) => cell !== "before the seam" || baseEntry !== "-");
  const script = fileURLToPath(import.meta.url);
  const figures = new Map<CellName, number[]>(cells.map((cell) => [cell, []]));
  for (let run = 0; run < runs; run++) {
    for (const cell of rotated(cells, run)) {
      const args = ["--expose-gc", script, "--cell", cell, baseEntry, String(pairs), String(rounds)];
      figures.get(cell)?.push(Number(execFileSync(process.execPath, args, { encoding: "utf8" })));
    }
  }
  const anchor = figures.get(cells[0] as CellName) ?? [];
  for (const [cell, values] of figures) {
    const ratios = values.map((ns, run) => ns / (anchor[run] ?? Number.NaN));
    const interval = medianInterval(ratios);
    const range = interval === undefined ? "" : ` [${interval.low.toFixed(3)}, ${interval.high.toFixed(3)}]`;
    console.log(`${cell.padEnd(22)} ${median(values).toFixed(1)} ns/message  ratio ${median(ratios).toFixed(3)}${range} vs ${cells[0]}`);
  }
}

const args = process.argv.slice(2);
if (args[0] === "--cell") {
  await measureCell(args[1] as CellName, args[2] ?? "-", Number(args[3]), Number(args[4]));
} else {
  drive(args[0] ?? "-", Number(args[1] ?? 15), Number(args[2] ?? 50_000), Number(args[3] ?? 15));
}
