/** How long and how often each scenario runs, for `--quick` and for the full run. */
export interface BenchOptions {
  quick: boolean;
  /** `--only a,b`: run just these scenarios (ids or names); the docs are then left alone. */
  only: string[] | undefined;
  /** Measured echo rounds (after one warm-up round); subjects interleave within a round. */
  rounds: number;
  /** How long each echo cell runs per round, in ms, cut into `echoSlices` passes. */
  echoMs: number;
  echoSlices: number;
  /** Requests in flight for the big cancellation case. */
  cancelMany: number;
  cancelRounds: number;
  /** Cancels of a single request per round (their median is the round's figure). */
  cancelOneRepeats: number;
  cascadeSizes: number[];
  cascadeRounds: number;
  /** Jobs in flight for the memory probes. */
  memoryJobs: number;
  memoryRepeats: number;
  /** Request+response pairs per engine micro-measurement. */
  enginePairs: number;
  engineRounds: number;
}

/** Each echo slice starts with this much unmeasured load, so that it measures the steady state. */
export const SLICE_WARMUP_MS = 25;

export function benchOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes("--quick");
  const onlyAt = argv.indexOf("--only");
  const onlyArg = onlyAt === -1 ? undefined : argv[onlyAt + 1];
  if (onlyAt !== -1 && (onlyArg === undefined || onlyArg.startsWith("--")))
    throw new Error("--only needs a comma-separated list of scenario ids or names");
  const only = onlyArg?.split(",").map((s) => s.trim()).filter((s) => s !== "");
  return quick
    ? {
        quick,
        only,
        rounds: 2,
        echoMs: 150,
        echoSlices: 1,
        cancelMany: 1_000,
        cancelRounds: 2,
        cancelOneRepeats: 5,
        cascadeSizes: [1, 10, 100, 1000],
        cascadeRounds: 2,
        memoryJobs: 10_000,
        memoryRepeats: 1,
        enginePairs: 20_000,
        engineRounds: 4,
      }
    : {
        quick,
        only,
        // Each round's figure comes from 4 passes of 150 ms that alternate with the other
        // cells' (a ratio is the median of per-round ratios, and on a shared machine slow
        // phases last from a fraction of a second to seconds).
        rounds: 9,
        echoMs: 600,
        echoSlices: 4,
        cancelMany: 10_000,
        cancelRounds: 9,
        cancelOneRepeats: 9,
        cascadeSizes: [1, 10, 100, 1000],
        cascadeRounds: 9,
        memoryJobs: 50_000,
        memoryRepeats: 3,
        enginePairs: 50_000,
        engineRounds: 11,
      };
}
