/**
 * What tracing costs per message when no OpenTelemetry SDK is registered, interleaved round by
 * round (medians): the engine with the observer seam unset, the same with `traceJobs()`
 * installed on the API's no-op global tracer, and, when a build of the code before the seam
 * is given, that one too.
 *
 *   node --expose-gc build/bench/engine/otel-cost.js [BASE_BUILD_DIR/src/index.js] [pairs] [rounds]
 */
import { pathToFileURL } from "node:url";
import { CancelEngine } from "../../src/index.js";
import { traceJobs } from "../../src/otel/index.js";
import { rotated } from "../lib/interleave.js";
import { median, medianInterval } from "../lib/stats.js";
import { ECHO, timePairs } from "./time-pairs.js";

type EngineClass = typeof CancelEngine;

const [baseEntry, pairsText, roundsText] = process.argv.slice(2);
const pairs = Number(pairsText ?? 20_000);
const rounds = Number(roundsText ?? 30);

const base = baseEntry === undefined || baseEntry === "-"
  ? undefined
  : ((await import(pathToFileURL(baseEntry).href)) as { CancelEngine: EngineClass }).CancelEngine;

interface Cell {
  key: string;
  run(): number;
}
const cells: Cell[] = [];
if (base !== undefined) {
  const engine = new base(() => {});
  cells.push({ key: "before the seam", run: () => timePairs(engine as unknown as CancelEngine, pairs, ECHO) });
}
const unset = new CancelEngine(() => {});
cells.push({ key: "seam unset", run: () => timePairs(unset, pairs, ECHO) });
const control = new CancelEngine(() => {});
cells.push({ key: "seam unset (A/A)", run: () => timePairs(control, pairs, ECHO) });
const noSdk = new CancelEngine(() => {});
cells.push({
  key: "traceJobs(), no SDK",
  run: () => {
    const stop = traceJobs();
    try {
      return timePairs(noSdk, pairs, ECHO);
    } finally {
      stop();
    }
  },
});

const samples = new Map<string, number[]>(cells.map((c) => [c.key, []]));
for (let round = -3; round < rounds; round++) {
  for (const cell of rotated(cells, Math.max(0, round))) {
    const ns = cell.run();
    if (round >= 0) samples.get(cell.key)?.push(ns);
  }
}
// Each round's cells ran side by side, so a ratio within a round cancels the machine's slow phases;
// the figure is the median of those per-round ratios, with its 95% interval. "seam unset (A/A)"
// runs the same code as "seam unset": its ratio is the noise floor of the method.
const anchor = samples.get("seam unset") ?? [];
for (const [key, values] of samples) {
  const ratios = values.map((ns, round) => ns / (anchor[round] ?? Number.NaN));
  const interval = medianInterval(ratios);
  const range = interval === undefined ? "" : ` [${interval.low.toFixed(3)}, ${interval.high.toFixed(3)}]`;
  console.log(`${key.padEnd(22)} ${median(values).toFixed(1)} ns/message  ratio ${median(ratios).toFixed(3)}${range} vs seam unset`);
}
