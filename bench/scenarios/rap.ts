/**
 * RAP (issue #10): the runtime's fan-out of one cancel to N tool servers against a
 * sequential sender (what RAP's reference runtime does), the tool server's endpoint
 * against a bare node:http handler, and memory per call. Ratios in one run, rounds
 * interleaved, medians.
 */
import { createServer, globalAgent, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { CallRegistry, createNodeCancelHandler } from "../../src/rap/index.js";
import { CancelFanout } from "../../src/rap/cancel-fanout.js";
import { start } from "../lib/child.js";
import type { LoadResult } from "../lib/load.js";
import type { BenchOptions } from "../lib/options.js";
import { peer } from "../lib/paths.js";
import { runProbe } from "../lib/probe.js";
import { median, ratio } from "../lib/stats.js";
import { fmt, formatValue, goal, type ScenarioResult } from "../report/types.js";

const SIZES = [1, 10, 25, 50, 100];
/** Each tool server takes this long to answer a notice. */
const ANSWER_MS = 50;
const FLAT_LIMIT = 1.5;

interface FanoutPoint {
  n: number;
  sentMs: number;
  settledMs: number;
  /** Settled, with a new connection to every server. */
  coldSettledMs: number;
  seqSentMs: number;
  seqSettledMs: number;
}

export async function rapScenario(options: BenchOptions): Promise<ScenarioResult> {
  const rounds = options.quick ? 2 : 5;
  const fanout = await fanoutSweep(rounds);
  const load = await endpointLoad(options.quick ? 3 : 9, options.quick ? 500 : 800);
  const memory = await memoryPerCall(options.quick ? 10_000 : 50_000);
  const at = (n: number) => fanout.find((p) => p.n === n) as FanoutPoint;
  const settledSpread = ratio(Math.max(...fanout.map((p) => p.settledMs)), Math.min(...fanout.map((p) => p.settledMs)));
  const coldSpread = ratio(Math.max(...fanout.map((p) => p.coldSettledMs)), Math.min(...fanout.map((p) => p.coldSettledMs)));
  const sentSpread = ratio(Math.max(...fanout.map((p) => p.sentMs)), Math.min(...fanout.map((p) => p.sentMs)));
  return {
    id: "rap",
    title: "RAP: cancel fan-out, cancel endpoint, memory per call",
    tables: [
      {
        title: `One cancel to N tool servers that each answer after ${ANSWER_MS} ms (median of ${rounds} rounds, ms)`,
        columns: ["N", "fan-out: all sent", "fan-out: all settled", "fan-out, new connections: all settled", "sequential: all sent", "sequential: all settled", "speed-up (settled)"],
        rows: fanout.map((p) => [
          String(p.n),
          fmt.ms(p.sentMs),
          fmt.ms(p.settledMs),
          fmt.ms(p.coldSettledMs),
          fmt.ms(p.seqSentMs),
          fmt.ms(p.seqSettledMs),
          fmt.x(ratio(p.seqSettledMs, p.settledMs)),
        ]),
        note:
          "'Sent': until the last server has received its POST (timed in the servers). 'Settled': until every POST has its outcome. " +
          "Each fan-out measured right after an unmeasured one to the same servers, so every N finds its keep-alive connections open; " +
          "'new connections': the agent's idle sockets dropped first. " +
          "The sequential sender awaits each POST before the next (global fetch), as RAP's reference runtime does. Real loopback HTTP; the tool servers run in a process of their own; " +
          "default fan-out options (node's HTTP client, concurrency 128, timeout 5 s).",
      },
      {
        title: "Endpoint throughput: POST /cancel_tool_call (node adapter) vs a bare node:http handler answering 200",
        columns: ["subject", "requests/s", "p50 ms", "p99 ms", "vs bare"],
        rows: [
          ["bare node:http (anchor)", fmt.rps(load.bare.rps), fmt.ms(load.bare.p50), fmt.ms(load.bare.p99), "1.00x"],
          ["cancel endpoint", fmt.rps(load.endpoint.rps), fmt.ms(load.endpoint.p50), fmt.ms(load.endpoint.p99), fmt.x(load.ratio)],
        ],
        note:
          "Closed loop, 32 keep-alive connections from a separate process, each request a distinct notice with a bearer token; " +
          "the endpoint authenticates, validates and applies each (unknown ids, so each is remembered), rate limit off. " +
          `The bare handler reads the body and answers 200. Median of ${load.ratios.length} interleaved rounds; 'vs bare' is the median of ` +
          "the per-round ratios (the two runs of a round are adjacent in time).",
      },
      {
        title: "Memory per call",
        columns: ["subject", "bytes / call in flight", "left after all are done (remembered window)"],
        rows: [
          ["tool server: CallRegistry.track", fmt.bytes(memory.registry.perCall), formatValue(memory.registry.residual, "B")],
          ["runtime: RapRuntime.dispatch", fmt.bytes(memory.runtime.perCall), formatValue(memory.runtime.residual, "B")],
        ],
        note: `Live heap after forced GCs with ${memory.n.toLocaleString("en-US")} calls, in a fresh process each; the remembered window already full at the baseline.`,
      },
    ],
    goals: [
      goal({
        id: "rap-fanout-vs-sequential",
        label: "RAP fan-out vs seq @50",
        description: "One cancel to 50 tool servers: time until all settled, sequential sender / fan-out",
        measured: ratio(at(50).seqSettledMs, at(50).settledMs),
        target: 10,
        kind: "min",
        unit: "x",
      }),
      goal({
        id: "rap-fanout-flat",
        label: "RAP fan-out N=1..100",
        description: "Fan-out time until all settled, slowest N / fastest N (N = 1…100): flat in N",
        measured: settledSpread,
        target: FLAT_LIMIT,
        anchor: `new connections: ${fmt.x(coldSpread)}`,
        kind: "max",
        unit: "x",
      }),
      goal({
        id: "rap-endpoint-throughput",
        label: "RAP endpoint/bare",
        description: "Cancel endpoint throughput vs a bare node:http handler answering 200",
        measured: load.ratio,
        target: 0.8,
        kind: "min",
        unit: "x",
      }),
    ],
    data: { fanout, sentSpread, settledSpread, coldSpread, load, memory },
  };
}

async function fanoutSweep(rounds: number): Promise<FanoutPoint[]> {
  const servers = await startToolServers(Math.max(...SIZES));
  const urls = servers.ports.map((port) => `http://127.0.0.1:${port}`);
  const now = () => performance.timeOrigin + performance.now();
  const concurrent = async (n: number) => {
    const fanout = new CancelFanout({ servers: urls.slice(0, n) });
    const t0 = now();
    fanout.notify("bench-thread", "bench-call");
    await fanout.idle();
    const settled = now() - t0;
    return { sent: Math.max(...(await servers.arrivals())) - t0, settled };
  };
  // Every N on the same footing: an unmeasured fan-out to the same servers just before opens
  // (or refreshes) a keep-alive connection to each, whatever the rounds before left idle long
  // enough to expire. Without it, N = 100 met connections closed during the 5 s sequential
  // runs and N = 1 never did.
  const warm = async (n: number) => {
    await concurrent(n);
    return concurrent(n);
  };
  // The same, every connection new: node's agent drops its idle sockets first (and their
  // closing is done before the clock starts).
  const cold = async (n: number) => {
    globalAgent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    return concurrent(n);
  };
  const sequential = async (n: number) => {
    const body = JSON.stringify({ thread_id: "bench-thread", tool_call_id: "bench-call" });
    const t0 = now();
    for (const url of urls.slice(0, n)) {
      const response = await fetch(`${url}/cancel_tool_call`, { method: "POST", headers: { "content-type": "application/json" }, body });
      await response.arrayBuffer();
    }
    const settled = now() - t0;
    return { sent: Math.max(...(await servers.arrivals())) - t0, settled };
  };
  // Warm-up: code compiled.
  await concurrent(urls.length);
  await sequential(urls.length);
  const samples = new Map<number, Samples>();
  for (const n of SIZES) samples.set(n, { sent: [], settled: [], coldSettled: [], seqSent: [], seqSettled: [] });
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 === 0 ? SIZES : [...SIZES].reverse()) {
      const s = samples.get(n) as Samples;
      const first = r % 2 === 0;
      const a = first ? await warm(n) : undefined;
      const b = await sequential(n);
      const c = a ?? (await warm(n));
      const d = await cold(n);
      s.sent.push(c.sent);
      s.settled.push(c.settled);
      s.coldSettled.push(d.settled);
      s.seqSent.push(b.sent);
      s.seqSettled.push(b.settled);
    }
  }
  await servers.close();
  return SIZES.map((n) => {
    const s = samples.get(n) as Samples;
    return {
      n,
      sentMs: median(s.sent),
      settledMs: median(s.settled),
      coldSettledMs: median(s.coldSettled),
      seqSentMs: median(s.seqSent),
      seqSettledMs: median(s.seqSettled),
    };
  });
}

interface Samples {
  sent: number[];
  settled: number[];
  coldSettled: number[];
  seqSent: number[];
  seqSettled: number[];
}

/** The tool servers' process: their ports, and the arrival times it recorded since last asked. */
async function startToolServers(count: number) {
  const child = start(process.execPath, [peer("rap-tool-servers"), String(count), String(ANSWER_MS)]);
  const lines = createInterface({ input: child.proc.stdout });
  const next = () => new Promise<string>((resolve) => lines.once("line", resolve));
  const ports = JSON.parse(await next()) as number[];
  return {
    ports,
    async arrivals(): Promise<number[]> {
      const answer = next();
      child.proc.stdin.write("arrivals\n");
      return JSON.parse(await answer) as number[];
    },
    close: () => child.stop(),
  };
}

interface EndpointLoad {
  bare: LoadResult;
  endpoint: LoadResult;
  /** Median over rounds of endpoint/bare within the round. */
  ratio: number;
  ratios: number[];
}

async function endpointLoad(rounds: number, durationMs: number): Promise<EndpointLoad> {
  const registry = new CallRegistry();
  const cancel = createNodeCancelHandler({
    registry,
    authenticate: (r) => r.headers.get("authorization") === "Bearer bench",
    rateLimit: false,
    floodLimit: false, // the bench floods one address on purpose
  });
  const bare = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-length": "0" });
      response.end();
    });
  });
  const endpoint = createServer(cancel);
  for (const server of [bare, endpoint]) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/cancel_tool_call`;
  const run = async (server: Server): Promise<LoadResult> => {
    const child = start(process.execPath, [peer("rap-load"), url(server), "32", String(durationMs)]);
    let stdout = "";
    child.proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    await child.exited;
    const result = JSON.parse(stdout) as LoadResult & { statuses: Record<string, number> };
    if (Object.keys(result.statuses).some((s) => s !== "200")) throw new Error(`unexpected statuses ${JSON.stringify(result.statuses)}`);
    return result;
  };
  const results = { bare: [] as LoadResult[], endpoint: [] as LoadResult[] };
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (["bare", "endpoint"] as const) : (["endpoint", "bare"] as const);
    for (const key of order) results[key].push(await run(key === "bare" ? bare : endpoint));
    // The two runs of a round are adjacent in time: their ratio cancels the machine's drifting load.
    ratios.push(ratio((results.endpoint.at(-1) as LoadResult).rps, (results.bare.at(-1) as LoadResult).rps));
  }
  for (const server of [bare, endpoint]) {
    server.closeAllConnections();
    server.close();
  }
  const med = (list: LoadResult[]): LoadResult => ({
    completed: median(list.map((l) => l.completed)),
    elapsedMs: median(list.map((l) => l.elapsedMs)),
    rps: median(list.map((l) => l.rps)),
    p50: median(list.map((l) => l.p50)),
    p99: median(list.map((l) => l.p99)),
  });
  return { bare: med(results.bare), endpoint: med(results.endpoint), ratio: median(ratios), ratios };
}

interface MemorySample {
  n: number;
  perCall: number;
  residual: number;
}

async function memoryPerCall(n: number) {
  const registry = await runProbe<MemorySample>("rap-memory-probe", ["registry", String(n)]);
  const runtime = await runProbe<MemorySample>("rap-memory-probe", ["runtime", String(n)]);
  return { n, registry, runtime };
}
