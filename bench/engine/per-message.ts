/** The engine's own cost per message, in isolation, next to the cost of parsing the same lines. */
import { CancelEngine } from "../../src/index.js";
import { median } from "../lib/stats.js";
import { buildPairs, ECHO, settle, timePairs } from "./time-pairs.js";

export interface PerMessage {
  /** ns per message through CancelEngine.receive with a no-op deliver. */
  engineNs: number;
  /** ns per message for JSON.parse of the same lines (what any ndjson relay must do). */
  parseNs: number;
  /** ns per message for JSON.stringify of the same messages. */
  stringifyNs: number;
}

function timeJson(count: number): { parseNs: number; stringifyNs: number } {
  const { requests, answers } = buildPairs(count, ECHO);
  const lines = requests.flatMap((r, i) => [JSON.stringify(r), JSON.stringify(answers[i])]);
  let sink = 0;
  settle();
  let started = process.hrtime.bigint();
  for (const line of lines) sink += (JSON.parse(line) as { id: number }).id;
  const parseNs = Number(process.hrtime.bigint() - started) / lines.length;
  const objects = requests.flatMap((r, i) => [r, answers[i]]);
  settle();
  started = process.hrtime.bigint();
  for (const object of objects) sink += JSON.stringify(object).length;
  const stringifyNs = Number(process.hrtime.bigint() - started) / objects.length;
  if (sink === -1) console.log(sink); // keeps the loops from being optimised away
  return { parseNs, stringifyNs };
}

export function perMessage(pairs: number, rounds: number): PerMessage {
  const engine = new CancelEngine(() => {});
  timePairs(engine, pairs, ECHO); // warm-up
  timeJson(pairs);
  const samples: PerMessage[] = [];
  for (let r = 0; r < rounds; r++) {
    const engineFirst = r % 2 === 0;
    const json = engineFirst ? undefined : timeJson(pairs);
    const engineNs = timePairs(engine, pairs, ECHO);
    const after = json ?? timeJson(pairs);
    samples.push({ engineNs, ...after });
  }
  return {
    engineNs: median(samples.map((s) => s.engineNs)),
    parseNs: median(samples.map((s) => s.parseNs)),
    stringifyNs: median(samples.map((s) => s.stringifyNs)),
  };
}
