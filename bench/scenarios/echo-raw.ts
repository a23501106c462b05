/**
 * Scenario 1e: a raw ndjson load generator (no SDK) against the fastest echo agent we can
 * write, directly, through the plain byte relay, and through `acp-cancel bridge`. With
 * both ends this cheap, what is left is the cost of the process in the middle.
 */
import { type RawClient, rawClient } from "../clients/raw-client.js";
import { type Route, startPeer } from "../lib/child.js";
import { type Cell, interleave, interleaveSliced } from "../lib/interleave.js";
import { type LoadResult, type LoadSample, mergeSlices } from "../lib/load.js";
import { must } from "../lib/must.js";
import { type BenchOptions, SLICE_WARMUP_MS } from "../lib/options.js";
import { median, medianOf, overRounds, ratio } from "../lib/stats.js";
import { fmt, goal, loadCells, type ScenarioResult } from "../report/types.js";

const ROUTES: { route: Route; label: string }[] = [
  { route: "direct", label: "direct (raw client ↔ raw echo agent)" },
  { route: "relay", label: "through the byte relay (anchor)" },
  { route: "relay-own-session", label: "through the byte relay, agent in a session of its own (as the bridge starts it)" },
  { route: "bridge", label: "through acp-cancel bridge" },
];

const cpuFmt = (us: number) => (Number.isFinite(us) ? us.toFixed(2) : "n/a");

export async function rawEchoScenario(options: BenchOptions): Promise<ScenarioResult> {
  const clients = new Map<Route, RawClient>(
    ROUTES.map(({ route }) => [route, rawClient(startPeer("raw-echo-agent", [], route))]),
  );
  // Every route answers once before measuring (processes started, code loaded).
  for (const client of clients.values()) await client.run(1, 50);
  // The cells compared with each other (same concurrency) run back to back in every round.
  const sliceMs = options.echoMs / options.echoSlices;
  const groups: Cell<LoadSample>[][] = [1, 64].map((c) =>
    ROUTES.map(({ route }) => ({
      key: `${route}@${c}`,
      async run() {
        const client = must(clients.get(route), route);
        await client.run(c, SLICE_WARMUP_MS); // unmeasured, as in scenario 1
        return client.run(c, sliceMs);
      },
    })),
  );
  const results = await interleaveSliced(groups, options.rounds, options.echoSlices, mergeSlices, 1);
  // CPU per request of the process in the middle, under the same open load for each route.
  const cpu = await interleave(
    ROUTES.map(({ route }) => ({
      key: route,
      // Long enough for the clock-tick resolution of /proc (10 ms) to stay under a few percent.
      run: () => must(clients.get(route), route).cpuPerRequest(64, options.quick ? 500 : 1500),
    })),
    Math.min(options.rounds, 5),
  );
  await Promise.all([...clients.values()].map((c) => c.close()));
  const cpuOf = (route: Route) => median(cpu.get(route) ?? []);

  const rounds = (route: Route, c: number) => results.get(`${route}@${c}`) ?? [];
  const perRoundValues = (f: (i: number) => number) => rounds("direct", 1).map((_, i) => f(i));
  const perRound = (f: (i: number) => number) => median(perRoundValues(f));
  const at = (route: Route, c: number, i: number) => rounds(route, c)[i] as LoadResult;
  const bridgeVsRelay64 = perRound((i) => ratio(at("bridge", 64, i).rps, at("relay", 64, i).rps));
  const bridgeVsRelay1 = perRound((i) => ratio(at("bridge", 1, i).rps, at("relay", 1, i).rps));
  const own: Route = "relay-own-session";
  const bridgeVsOwn1 = perRound((i) => ratio(at("bridge", 1, i).rps, at(own, 1, i).rps));
  const bridgeVsOwn64 = perRound((i) => ratio(at("bridge", 64, i).rps, at(own, 64, i).rps));
  const added = (route: Route) =>
    medianOf(rounds(route, 1), (r) => r.p50) - medianOf(rounds("direct", 1), (r) => r.p50);
  // Per round: each route's p50 minus the direct p50 of the same round, then the ratio.
  const addedIn = (route: Route, i: number) => at(route, 1, i).p50 - at("direct", 1, i).p50;
  const addedRatio = perRound((i) => ratio(addedIn("bridge", i), addedIn("relay", i)));

  const summary = Object.fromEntries(
    ROUTES.map(({ route }) => [
      route,
      Object.fromEntries(
        [1, 64].map((c) => [
          `c${c}`,
          {
            rps: medianOf(rounds(route, c), (r) => r.rps),
            p50: medianOf(rounds(route, c), (r) => r.p50),
            p99: medianOf(rounds(route, c), (r) => r.p99),
          },
        ]),
      ),
    ]),
  ) as Record<Route, Record<string, { rps: number; p50: number; p99: number }>>;
  const rows = ROUTES.map(({ route, label }) => {
    const one = summary[route].c1 as { rps: number; p50: number; p99: number };
    const many = summary[route].c64 as { rps: number; p50: number; p99: number };
    return [
      label,
      ...loadCells(one, many),
      route === "direct" ? "" : fmt.ms(added(route)),
    ];
  });
  return {
    id: "echo-raw",
    title: "1e. Raw ndjson load: the cost of the process in the middle",
    tables: [
      {
        title: "Raw load generator ↔ raw echo agent",
        columns: [
          "route",
          "req/s @1",
          "p50 ms @1",
          "p99 ms @1",
          "req/s @64",
          "p50 ms @64",
          "p99 ms @64",
          "added p50 @1",
        ],
        rows,
        note: `Bridge/relay throughput: ${fmt.x(bridgeVsRelay1)} at 1 in flight, ${fmt.x(bridgeVsRelay64)} at 64. Against the relay whose agent has a session of its own, as the bridge's has: ${fmt.x(bridgeVsOwn1)} at 1 in flight, ${fmt.x(bridgeVsOwn64)} at 64. Added p50 = route p50 − direct p50 (the goal takes the ratio per round, then the median).`,
      },
      {
        title: "CPU per request, open load (a burst of 64 requests every millisecond)",
        columns: ["process", "µs of CPU per request (request + answer)"],
        rows: [
          ["the raw echo agent (direct route)", cpuFmt(cpuOf("direct"))],
          ["the byte relay", cpuFmt(cpuOf("relay"))],
          ["the byte relay, agent in a session of its own", cpuFmt(cpuOf("relay-own-session"))],
          ["acp-cancel bridge", cpuFmt(cpuOf("bridge"))],
        ],
        note:
          "User + system CPU of the one process, from /proc, over the answered requests; median over rounds. " +
          "This does not depend on how the closed loop's batches travel, and moves less than throughput on a shared machine.",
      },
    ],
    goals: [
      goal({
        id: "raw-bridge-vs-relay-c64",
        label: "bridge/relay req/s @64",
        description: "Raw echo throughput through the bridge vs through the byte relay, 64 in flight",
        ...overRounds(perRoundValues((i) => ratio(at("bridge", 64, i).rps, at("relay", 64, i).rps))),
        anchor: `relay: ${fmt.rps(summary.relay.c64?.rps ?? Number.NaN)} req/s; bridge: ${fmt.rps(summary.bridge.c64?.rps ?? Number.NaN)} req/s`,
        target: 0.9,
        kind: "min",
        unit: "x",
      }),
      goal({
        id: "raw-added-latency-c1",
        label: "bridge/relay added p50 @1",
        description: "Added p50 latency at 1 in flight, bridge vs byte relay (each minus direct)",
        ...overRounds(perRoundValues((i) => ratio(addedIn("bridge", i), addedIn("relay", i)))),
        anchor: `relay adds ${fmt.ms(added("relay"))} ms; bridge adds ${fmt.ms(added("bridge"))} ms`,
        target: 1.5,
        kind: "max",
        unit: "x",
        poolRuns: 3, // 1 in flight: judged by the median pooled over 3 full runs
      }),
    ],
    data: {
      rounds: Object.fromEntries(results),
      ...summary,
      bridgeVsRelay1,
      bridgeVsRelay64,
      bridgeVsOwnSessionRelay: { c1: bridgeVsOwn1, c64: bridgeVsOwn64 },
      addedP50: { bridge: added("bridge"), relay: added("relay") },
      addedRatio,
      cpuPerRequest: Object.fromEntries(cpu),
    },
  };
}
