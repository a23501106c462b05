/**
 * Scenario 4: bytes retained per in-flight request, and what is left once everything is
 * answered. Each measurement runs in a fresh child process with --expose-gc; subjects are
 * interleaved across repeats.
 */
import type { BenchOptions } from "../lib/options.js";
import { runProbe } from "../lib/probe.js";
import { median, ratio } from "../lib/stats.js";
import { fmt, formatValue, goal, type ScenarioResult } from "../report/types.js";

interface MemorySample {
  n: number;
  baseline: number;
  loaded: number;
  quiescent: number;
  perJob: number;
  residual: number;
  leakPerJob: number;
}

const SUBJECTS = [
  { key: "engine", label: "CancelEngine alone (in process, no I/O)" },
  { key: "sdk", label: "bare SDK client (anchor)" },
  { key: "vscode", label: "vscode-jsonrpc client (anchor)" },
  { key: "embedded-sdk", label: "SDK client with withCancellation (SDK + engine)" },
];

/**
 * How far from the baseline the heap may be after quiescence. Heap figures after GC move
 * by up to a heap page (256 KB) from run to run whatever N is; N requests in flight take
 * megabytes, so anything kept per request would show well above this.
 */
const RESIDUAL_LIMIT = 256 * 1024;

export async function memoryScenario(options: BenchOptions): Promise<ScenarioResult> {
  const n = options.memoryJobs;
  const samples = new Map<string, MemorySample[]>(SUBJECTS.map((s) => [s.key, []]));
  for (let r = 0; r < options.memoryRepeats; r++) {
    const order = r % 2 === 0 ? SUBJECTS : [...SUBJECTS].reverse();
    for (const s of order) {
      samples.get(s.key)?.push(await runProbe<MemorySample>("memory-probe", [s.key, String(n)]));
    }
  }
  const med = (key: string, pick: (s: MemorySample) => number) => median((samples.get(key) ?? []).map(pick));
  const perJob = (key: string) => med(key, (s) => s.perJob);
  const residual = (key: string) => med(key, (s) => s.residual);
  return {
    id: "memory",
    title: "4. Memory per in-flight request",
    tables: [
      {
        title: `Heap retained with ${n.toLocaleString("en-US")} requests in flight, and after all are answered`,
        columns: [
          "subject",
          "bytes / job",
          "vs SDK",
          "left after quiescence",
          "per job",
          "second cycle adds, per job",
        ],
        rows: SUBJECTS.map((s) => [
          s.label,
          fmt.bytes(perJob(s.key)),
          fmt.x(ratio(perJob(s.key), perJob("sdk"))),
          formatValue(residual(s.key), "B"),
          `${(residual(s.key) / n).toFixed(1)} B`,
          `${med(s.key, (x) => x.leakPerJob).toFixed(1)} B`,
        ]),
        note:
          "Live heap (code spaces left out) after forced GCs, in a fresh process per measurement, median of repeats; " +
          "the baseline is taken after a warm-up cycle of the same size. " +
          "The SDK and vscode-jsonrpc clients talk to an in-memory peer that reads requests and answers only when drained. " +
          "'Second cycle adds': heap growth from one quiescent point to the next after another N requests, per request " +
          "(a leak shows here; noise is about ±256 KB / N).",
      },
    ],
    goals: [
      goal({
        id: "memory-per-job",
        label: "bytes/job engine/SDK",
        description: "Bytes retained per in-flight request, CancelEngine vs the bare SDK client",
        measured: ratio(perJob("engine"), perJob("sdk")),
        anchor: `SDK: ${fmt.bytes(perJob("sdk"))} B/job; engine: ${fmt.bytes(perJob("engine"))} B/job`,
        target: 0.25,
        kind: "max",
        unit: "x",
      }),
      goal({
        id: "memory-quiescent",
        label: "engine residual",
        description: `CancelEngine heap left after quiescence (${n.toLocaleString("en-US")} requests answered), vs the baseline`,
        measured: residual("engine"),
        target: RESIDUAL_LIMIT,
        kind: "max",
        unit: "B",
      }),
    ],
    data: {
      n,
      subjects: Object.fromEntries(
        SUBJECTS.map((s) => [s.key, { label: s.label, samples: samples.get(s.key) }]),
      ),
    },
  };
}
