/**
 * Replicas (issue #27): cancel latency across replicas against the same replica, on each
 * backend of the cancel bus (real PostgreSQL and Redis on loopback), in one run, samples
 * interleaved; and 1,000 concurrent cross-replica cancels, each settled exactly once.
 *
 * Same-replica: replica A cancels a key A claimed (answered in process). Cross-replica: replica
 * B cancels a key A claimed (remember, publish, A's handler, A's confirmation). Goal: the
 * cross-replica p50 at most the same-replica p50 + 2 ms.
 *
 * Register it in bench/run.ts: `{ id: "replicas", name: "replicas (PostgreSQL, Redis)", run: replicasScenario }`.
 */
import { type CancelBus, postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";
import { type RealServer, startPostgres, startRedis } from "../../test/replicas/servers.js";
import type { BenchOptions } from "../lib/options.js";
import { percentile } from "../lib/stats.js";
import { fmt, goal, type Goal, type ScenarioResult, type Table } from "../report/types.js";

const MARGIN_MS = 2;
const CONCURRENT = 1000;

interface BackendResult {
  backend: string;
  sameMs: number[];
  crossMs: number[];
  concurrent: { settledMs: number; confirmed: number; handlerRuns: number; extraRuns: number };
}

interface Backend {
  name: string;
  start: () => Promise<RealServer>;
  open: (url: string, replica: string) => Promise<CancelBus>;
}

const BACKENDS: Backend[] = [
  { name: "postgres", start: startPostgres, open: (url, replica) => postgresCancelBus(url, { replica }) },
  { name: "redis", start: startRedis, open: (url, replica) => redisCancelBus(url, { replica }) },
];

export async function replicasScenario(options: BenchOptions): Promise<ScenarioResult> {
  const samples = options.quick ? 100 : 500;
  const results: BackendResult[] = [];
  for (const backend of BACKENDS) results.push(await measure(backend, samples));
  const goals: Goal[] = [];
  const rows: string[][] = [];
  for (const r of results) {
    const same = percentile(r.sameMs, 50);
    const cross = percentile(r.crossMs, 50);
    rows.push([r.backend, fmt.ms(same), fmt.ms(cross), fmt.ms(percentile(r.crossMs, 95)), fmt.ms(r.concurrent.settledMs),
      `${r.concurrent.confirmed}/${CONCURRENT}`, String(r.concurrent.extraRuns)]);
    goals.push(goal({
      id: `replicas-${r.backend}-p50`,
      description: `${r.backend}: cross-replica cancel p50 at most same-replica p50 + ${MARGIN_MS} ms`,
      measured: cross,
      target: same + MARGIN_MS,
      kind: "max",
      unit: "ms",
      label: `cross-replica p50 (${r.backend})`,
    }));
    goals.push(goal({
      id: `replicas-${r.backend}-concurrent`,
      description: `${r.backend}: ${CONCURRENT} concurrent cross-replica cancels, all confirmed, each handler run exactly once`,
      measured: settledOnce(r.concurrent) ? 1 : 0,
      target: 1,
      kind: "min",
      unit: "x",
      chart: false,
      label: `${CONCURRENT} concurrent (${r.backend})`,
    }));
  }
  const table: Table = {
    title: `Cancel latency on the bus, ${samples} samples each, interleaved (ms)`,
    columns: ["backend", "same replica p50", "cross replica p50", "cross replica p95", `${CONCURRENT} concurrent: all settled`, "confirmed", "extra handler runs"],
    rows,
    note: "Same replica: answered in process. Cross replica: remember + publish + the owner's handler + its confirmation, over loopback.",
  };
  return { id: "replicas", title: "Replicas: cancel across replicas on PostgreSQL and Redis", tables: [table], goals, data: results };
}

function settledOnce(c: BackendResult["concurrent"]): boolean {
  return c.confirmed === CONCURRENT && c.handlerRuns === CONCURRENT && c.extraRuns === 0;
}

async function measure(backend: Backend, samples: number): Promise<BackendResult> {
  const server = await backend.start();
  const buses: CancelBus[] = [];
  try {
    const a = await backend.open(server.url, "a");
    const b = await backend.open(server.url, "b");
    buses.push(a, b);
    const sameMs: number[] = [];
    const crossMs: number[] = [];
    for (let i = 0; i < samples + 20; i++) {
      for (const [kind, canceller] of [["same", a], ["cross", b]] as const) {
        const key = `${kind}-${i}`;
        const claim = a.claim(key, async () => undefined);
        await new Promise((resolve) => setTimeout(resolve, 2)); // the lease is written
        const started = performance.now();
        const verdict = await canceller.cancel(key).catch((error: unknown) => {
          throw new Error(`${backend.name}: ${kind} cancel ${i} failed`, { cause: error });
        });
        const elapsed = performance.now() - started;
        claim.release();
        if (verdict.kind !== "confirmed") throw new Error(`${backend.name}: ${kind} cancel ${i} was ${verdict.kind}`);
        if (i >= 20) (kind === "same" ? sameMs : crossMs).push(elapsed); // the first 20 warm up
      }
    }
    const runs = new Map<string, number>();
    const keys = Array.from({ length: CONCURRENT }, (_, i) => `many-${i}`);
    for (const key of keys) a.claim(key, async () => runs.set(key, (runs.get(key) ?? 0) + 1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    const verdicts = await Promise.all(keys.map((key) => b.cancel(key, { waitMs: 30_000 }).catch((error: unknown) => {
      throw new Error(`${backend.name}: a concurrent cancel failed: ${String(error)}`, { cause: error });
    })));
    const settledMs = performance.now() - started;
    const handlerRuns = [...runs.values()].filter((n) => n === 1).length;
    const extraRuns = [...runs.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    return {
      backend: backend.name,
      sameMs,
      crossMs,
      concurrent: { settledMs, confirmed: verdicts.filter((v) => v.kind === "confirmed").length, handlerRuns, extraRuns },
    };
  } finally {
    await Promise.allSettled(buses.map((bus) => bus.close()));
    await server.close();
  }
}
