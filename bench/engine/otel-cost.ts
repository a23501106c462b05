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
import { median } from "../lib/stats.js";
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
  const order = round % 2 === 0 ? cells : [...cells].reverse();
  const shift = ((round % cells.length) + cells.length) % cells.length;
  for (const cell of [...order.slice(shift), ...order.slice(0, shift)]) {
    const ns = cell.run();
    if (round >= 0) samples.get(cell.key)?.push(ns);
  }
}
const anchor = median(samples.get("seam unset") ?? []);
for (const [key, values] of samples) {
  const m = median(values);
  console.log(`${key.padEnd(22)} ${m.toFixed(1)} ns/message  (${((m / anchor - 1) * 100).toFixed(1)}% vs seam unset)`);
}
