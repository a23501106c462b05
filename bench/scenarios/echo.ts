/**
 * Scenario 1 a–d, f: echo throughput and latency at 1 and 64 in flight, client and agent in
 * separate processes over stdio. The anchor is the bare SDK pair (a).
 */
import { connectSdkClient } from "../clients/sdk-client.js";
import { connectAcpVscodeClient, connectVscodeClient } from "../clients/vscode-client.js";
import { type Route, startPeer } from "../lib/child.js";
import { type Cell, interleaveSliced } from "../lib/interleave.js";
import { closedLoop, type LoadSample, mergeSlices } from "../lib/load.js";
import { must } from "../lib/must.js";
import { type BenchOptions, SLICE_WARMUP_MS } from "../lib/options.js";
import { median, medianOf, overRounds, ratio } from "../lib/stats.js";
import { fmt, goal, loadCells, type ScenarioResult } from "../report/types.js";

interface Subject {
  key: string;
  label: string;
  /** Set while a subject is only a placeholder: what has to exist before it can run. */
  slot?: string;
  connect?(): Promise<{ call(): Promise<unknown>; close(): Promise<void> }>;
}

const sdkPair = (route: Route, wrapped: boolean, inline = false) => async () => {
  const child = startPeer("sdk-agent", inline ? ["--inline"] : wrapped ? ["--wrapped"] : [], route);
  const client = await connectSdkClient(child, { wrapped, inline });
  return { call: () => client.agent.request("bench/echo", {}), close: () => client.close() };
};

const SUBJECTS: Subject[] = [
  { key: "sdk", label: "a. bare SDK ↔ bare SDK (anchor)", connect: sdkPair("direct", false) },
  { key: "embedded", label: "b. withCancellation on both ends", connect: sdkPair("direct", true) },
  {
    key: "embedded-inline",
    label: "b′. withCancellation + acp-cancel ndJsonStream on both ends",
    connect: sdkPair("direct", true, true),
  },
  { key: "bridge", label: "c. SDK → acp-cancel bridge → SDK", connect: sdkPair("bridge", false) },
  { key: "relay", label: "d. SDK → byte relay → SDK", connect: sdkPair("relay", false) },
  {
    key: "relay-own-session",
    label: "d′. SDK → byte relay → SDK, agent in a session of its own (as the bridge starts it)",
    connect: sdkPair("relay-own-session", false),
  },
  {
    key: "vscode",
    label: "f. vscode-jsonrpc ↔ vscode-jsonrpc (Content-Length)",
    async connect() {
      const client = connectVscodeClient(startPeer("vscode-echo-server"));
      await client.request("bench/echo");
      return { call: () => client.request("bench/echo"), close: () => client.close() };
    },
  },
  {
    key: "vscode-ndjson",
    label: "f′. vscode-jsonrpc + acp-cancel ndjson binding",
    async connect() {
      const client = connectAcpVscodeClient(startPeer("vscode-echo-server", ["--acp"]));
      await client.request("bench/echo");
      return { call: () => client.request("bench/echo"), close: () => client.close() };
    },
  },
];

export const CONCURRENCY = [1, 64] as const;

export async function echoScenario(options: BenchOptions): Promise<ScenarioResult> {
  const live = SUBJECTS.filter((s) => s.connect !== undefined);
  const connections = new Map(
    await Promise.all(
      live.map(async (s) => [s.key, await (s.connect as NonNullable<Subject["connect"]>)()] as const),
    ),
  );
  // The cells compared with each other (same concurrency) run back to back in every round.
  const sliceMs = options.echoMs / options.echoSlices;
  const groups: Cell<LoadSample>[][] = CONCURRENCY.map((c) =>
    live.map((s) => ({
      key: `${s.key}@${c}`,
      async run() {
        const { call } = must(connections.get(s.key), s.key);
        // Unmeasured: the pair was idle while the other cells ran, and a slice is short.
        await closedLoop(call, c, SLICE_WARMUP_MS);
        return closedLoop(call, c, sliceMs);
      },
    })),
  );
  const results = await interleaveSliced(groups, options.rounds, options.echoSlices, mergeSlices, 1);
  await Promise.all([...connections.values()].map((c) => c.close()));

  const rounds = (key: string, c: number) => results.get(`${key}@${c}`) ?? [];
  /** Subject/anchor per round, each round's pair measured close together. */
  const rpsRatios = (key: string, anchor: string, c: number) => {
    const a = rounds(anchor, c);
    return rounds(key, c).map((r, i) => ratio(r.rps, a[i]?.rps ?? Number.NaN));
  };
  /** Median over rounds of subject/anchor. */
  const rpsRatio = (key: string, anchor: string, c: number) => median(rpsRatios(key, anchor, c));
  const summary = Object.fromEntries(
    SUBJECTS.map((s) => [
      s.key,
      {
        label: s.label,
        slot: s.slot,
        ...Object.fromEntries(
          CONCURRENCY.map((c) => [
            `c${c}`,
            {
              rps: medianOf(rounds(s.key, c), (r) => r.rps),
              p50: medianOf(rounds(s.key, c), (r) => r.p50),
              p99: medianOf(rounds(s.key, c), (r) => r.p99),
              vsSdk: rpsRatio(s.key, "sdk", c),
            },
          ]),
        ),
      },
    ]),
  ) as Record<
    string,
    { label: string; slot?: string } & Record<
      string,
      { rps: number; p50: number; p99: number; vsSdk: number }
    >
  >;

  const rows = SUBJECTS.map((s) => {
    if (s.slot !== undefined) return [s.label, "slot", "", "", "", "", "", "", s.slot];
    const at = (c: number) =>
      summary[s.key]?.[`c${c}`] as { rps: number; p50: number; p99: number; vsSdk: number };
    const one = at(1);
    const many = at(64);
    return [
      s.label,
      ...loadCells(one, many),
      fmt.x(one.vsSdk),
      fmt.x(many.vsSdk),
    ];
  });
  const rpsOf = (key: string, c: number) => medianOf(rounds(key, c), (r) => r.rps);
  /** "anchor 6,385 req/s, subject 5,920 req/s": the figures behind a ratio. */
  const figures = (anchor: string, key: string, c: number) =>
    `${anchor}: ${fmt.rps(rpsOf(anchor, c))} req/s; subject: ${fmt.rps(rpsOf(key, c))} req/s`;
  // At 1 in flight the run-to-run spread is wider than the margin: judged over 3 full runs.
  const goals = [1, 64].flatMap((c) => {
    const poolAtOne = c === 1 ? { poolRuns: 3 } : {};
    return [
      goal({
        id: `echo-embedded-c${c}`,
        label: `embedded/SDK @${c}`,
        description: `Echo throughput, withCancellation on both ends vs bare SDK, ${c} in flight`,
        ...overRounds(rpsRatios("embedded", "sdk", c)),
        anchor: figures("sdk", "embedded", c),
        target: 0.95,
        kind: "min",
        unit: "x",
        ...poolAtOne,
      }),
      goal({
        id: `echo-embedded-inline-c${c}`,
        label: `embedded inline/SDK @${c}`,
        description: `Echo throughput, withCancellation on ndJsonStream on both ends vs bare SDK, ${c} in flight`,
        ...overRounds(rpsRatios("embedded-inline", "sdk", c)),
        anchor: figures("sdk", "embedded-inline", c),
        target: 0.95,
        kind: "min",
        unit: "x",
        ...poolAtOne,
      }),
      goal({
        id: `echo-vscode-binding-c${c}`,
        label: `vscode binding/stock @${c}`,
        description: `Echo throughput, vscode-jsonrpc on acp-cancel's binding vs stock vscode-jsonrpc, ${c} in flight`,
        ...overRounds(rpsRatios("vscode-ndjson", "vscode", c)),
        anchor: figures("vscode", "vscode-ndjson", c),
        target: 1,
        kind: "min",
        unit: "x",
        ...poolAtOne,
      }),
      goal({
        id: `echo-bridge-vs-relay-c${c}`,
        label: `bridge/relay @${c}`,
        description: `Echo throughput, SDK apps through acp-cancel bridge vs through a plain byte relay, ${c} in flight`,
        ...overRounds(rpsRatios("bridge", "relay", c)),
        anchor: figures("relay", "bridge", c),
        target: 0.95,
        kind: "min",
        unit: "x",
        ...poolAtOne,
      }),
      goal({
        id: `echo-bridge-c${c}`,
        label: `bridge/SDK @${c}`,
        description: `Echo throughput, SDK through acp-cancel bridge vs bare SDK direct, ${c} in flight`,
        ...overRounds(rpsRatios("bridge", "sdk", c)),
        anchor: figures("sdk", "bridge", c),
        target: 0.9,
        kind: "min",
        unit: "x",
        ...poolAtOne,
      }),
    ];
  });
  return {
    id: "echo",
    title: "1. Echo over stdio (SDK apps)",
    tables: [
      {
        title: "Echo, client and agent in separate processes",
        columns: [
          "subject",
          "req/s @1",
          "p50 ms @1",
          "p99 ms @1",
          "req/s @64",
          "p50 ms @64",
          "p99 ms @64",
          "vs a @1",
          "vs a @64",
        ],
        rows,
        note:
          "Medians over rounds; 'vs a' is the median over rounds of the per-round throughput ratio to (a). " +
          `Bridge (c) against the relay whose agent has a session of its own (d′): ${fmt.x(rpsRatio("bridge", "relay-own-session", 1))} at 1 in flight, ` +
          `${fmt.x(rpsRatio("bridge", "relay-own-session", 64))} at 64.`,
      },
    ],
    goals,
    data: { ...summary, rounds: Object.fromEntries(results) },
  };
}
