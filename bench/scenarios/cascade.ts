/**
 * Scenario 3: cascade. The agent's prompt handler issues N nested requests to the client
 * (whose handlers never answer on their own but honour their signal); the client sends
 * `session/cancel`. Measured on the client's wire from `session/cancel` leaving: until all
 * N nested `$/cancel_request` have arrived, and until the prompt is answered. The engine's
 * own share comes from the same cascade fed to CancelEngine in process.
 */
import * as acp from "@agentclientprotocol/sdk";
import { connectSdkClient, type SdkClient } from "../clients/sdk-client.js";
import type { CascadeCost } from "../engine/cascade.js";
import { startPeer } from "../lib/child.js";
import { type Cell, interleaveGroups } from "../lib/interleave.js";
import { must } from "../lib/must.js";
import type { BenchOptions } from "../lib/options.js";
import { runProbe } from "../lib/probe.js";
import { medianOf, overRounds, ratio } from "../lib/stats.js";
import { fmt, goal, type ScenarioResult } from "../report/types.js";

interface CascadeSample {
  /** session/cancel out → last nested `$/cancel_request` in (ms). */
  cancels: number;
  /** session/cancel out → prompt answer in (ms). */
  prompt: number;
  /** Both done (ms). */
  total: number;
  stopReason: string;
}

class CascadeWatch {
  sent = Number.NaN;
  cancels = 0;
  lastCancel = Number.NaN;
  nested = 0;
  private want = 0;
  private wantNested = 0;
  private allCancels: (() => void) | undefined;
  private allNested: (() => void) | undefined;
  armNested(n: number): Promise<void> {
    this.nested = 0;
    this.wantNested = n;
    return new Promise((resolve) => {
      this.allNested = resolve;
    });
  }

  armCancels(n: number): Promise<void> {
    this.sent = Number.NaN;
    this.cancels = 0;
    this.want = n;
    return new Promise((resolve) => {
      this.allCancels = resolve;
    });
  }

  onNested() {
    if (++this.nested === this.wantNested) this.allNested?.();
  }

  out(message: Record<string, unknown>, now: number) {
    if (message.method === "session/cancel") this.sent = now;
  }

  in(message: Record<string, unknown>, now: number) {
    if (message.method !== "$/cancel_request") return;
    this.lastCancel = now;
    if (++this.cancels === this.want) this.allCancels?.();
  }
}

interface Target {
  client: SdkClient;
  watch: CascadeWatch;
  sessionId: string;
}

const SUBJECTS = [
  {
    key: "embedded",
    label: "agent withCancellation, bare SDK client",
    agent: ["--wrapped"],
    wrappedClient: false,
  },
  {
    key: "embedded-inline",
    label: "agent withCancellation + acp-cancel ndJsonStream, bare SDK client",
    agent: ["--inline"],
    wrappedClient: false,
  },
  { key: "embedded-both", label: "withCancellation on both ends", agent: ["--wrapped"], wrappedClient: true },
  {
    key: "sdk-by-hand",
    label: "bare SDK, signals threaded by hand (anchor)",
    agent: [] as string[],
    wrappedClient: false,
  },
];

async function connect(agentArgs: string[], wrappedClient: boolean): Promise<Target> {
  const watch = new CascadeWatch();
  const client = await connectSdkClient(startPeer("sdk-agent", agentArgs), {
    wrapped: wrappedClient,
    onNested: () => watch.onNested(),
    tap: { outgoing: (m, now) => watch.out(m, now), incoming: (m, now) => watch.in(m, now) },
  });
  const { sessionId } = await client.agent.request(acp.methods.agent.session.new, {
    cwd: "/",
    mcpServers: [],
  });
  return { client, watch, sessionId };
}

async function measure({ client, watch, sessionId }: Target, n: number): Promise<CascadeSample> {
  const nested = watch.armNested(n);
  let answeredAt = Number.NaN;
  const prompt = client.agent
    .request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: `cascade ${n}` }],
    })
    .then((response) => {
      answeredAt = performance.now();
      return response.stopReason;
    });
  await nested;
  const cancels = watch.armCancels(n);
  await client.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 20_000).unref());
  const [stopReason, done] = await Promise.all([prompt, Promise.race([cancels, timeout])]);
  if (done === "timeout") throw new Error(`cascade ${n}: only ${watch.cancels} cancels arrived`);
  const c = watch.lastCancel - watch.sent;
  const p = answeredAt - watch.sent;
  return { cancels: c, prompt: p, total: Math.max(c, p), stopReason };
}

export async function cascadeScenario(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.cascadeSizes;
  const targets = new Map<string, Target>();
  for (const s of SUBJECTS) {
    const target = await connect(s.agent, s.wrappedClient);
    targets.set(s.key, target);
    for (const n of sizes) await measure(target, n); // warm-up
  }
  // The cells compared with each other (same N) run back to back in every round.
  const groups: Cell<CascadeSample>[][] = sizes.map((n) =>
    SUBJECTS.map((s) => ({ key: `${s.key}@${n}`, run: () => measure(must(targets.get(s.key), s.key), n) })),
  );
  const results = await interleaveGroups(groups, options.cascadeRounds);
  await Promise.all([...targets.values()].map((t) => t.client.close()));
  const engine = await runProbe<CascadeCost[]>("engine-probe", [
    "cascade",
    JSON.stringify({ sizes, rounds: options.engineRounds }),
  ]);

  const at = (key: string, n: number) => results.get(`${key}@${n}`) ?? [];
  const med = (key: string, n: number, pick: (s: CascadeSample) => number) => medianOf(at(key, n), pick);
  const allCancelled = SUBJECTS.every((s) =>
    sizes.every((n) => at(s.key, n).every((x) => x.stopReason === "cancelled")),
  );
  const engineAt = (n: number, pick: (c: CascadeCost) => number) => {
    const cost = engine.find((x) => x.n === n);
    return cost === undefined ? Number.NaN : pick(cost);
  };
  const rows = [
    ...SUBJECTS.flatMap((s) => [
      [`${s.label}: all $/cancel_request in`, ...sizes.map((n) => fmt.ms(med(s.key, n, (x) => x.cancels)))],
      [`${s.label}: prompt answered`, ...sizes.map((n) => fmt.ms(med(s.key, n, (x) => x.prompt)))],
    ]),
    ["engine only, in process: fan-out", ...sizes.map((n) => fmt.ms(engineAt(n, (c) => c.fanOutMs)))],
    ["engine only, in process: total", ...sizes.map((n) => fmt.ms(engineAt(n, (c) => c.totalMs)))],
  ];
  const biggest = sizes[sizes.length - 1] as number;
  const engineBiggest = engine.find((x) => x.n === biggest);
  const ANCHOR = "sdk-by-hand";
  // Per round against the hand-threaded anchor measured in the same round, then the median.
  const vsAnchorPerRound = (key: string) =>
    at(key, biggest).map((s, i) => ratio(s.total, at(ANCHOR, biggest)[i]?.total ?? Number.NaN));
  const figures = (key: string) =>
    `by hand: ${fmt.ms(med(ANCHOR, biggest, (x) => x.total))} ms; subject: ${fmt.ms(med(key, biggest, (x) => x.total))} ms`;
  return {
    id: "cascade",
    title: "3. Cascade on session/cancel",
    tables: [
      {
        title: "N nested requests cancelled by session/cancel (ms from session/cancel leaving the client)",
        columns: ["ms, by N nested requests", ...sizes.map((n) => `N = ${n}`)],
        rows,
        note:
          `Every prompt ended with stopReason "cancelled": ${allCancelled ? "yes" : "NO"}. ` +
          "Engine only: CancelEngine placed as in an embedded agent, fed the same cascade in process " +
          "(fan-out: session/cancel in → N $/cancel_request out; total: until the prompt's answer is out, " +
          "the N client answers included).",
      },
    ],
    goals: [
      goal({
        id: "cascade-1000",
        label: `cascade ${biggest}`,
        description: `Cascade of ${biggest} nested requests, agent withCancellation vs a bare SDK agent threading signals by hand`,
        ...overRounds(vsAnchorPerRound("embedded")),
        anchor: figures("embedded"),
        target: 1,
        kind: "max",
        unit: "x",
      }),
      goal({
        id: "cascade-1000-inline",
        label: `cascade ${biggest} inline`,
        description: `Cascade of ${biggest} nested requests, agent withCancellation on ndJsonStream vs signals by hand`,
        ...overRounds(vsAnchorPerRound("embedded-inline")),
        anchor: figures("embedded-inline"),
        target: 1,
        kind: "max",
        unit: "x",
      }),
      goal({
        id: "cascade-1000-engine",
        label: `cascade ${biggest}, engine only`,
        description: `The engine's own share of a ${biggest}-request cascade, in process (fan-out and answers)`,
        measured: engineBiggest?.totalMs ?? Number.NaN,
        anchor: `fan-out alone: ${fmt.ms(engineBiggest?.fanOutMs ?? Number.NaN)} ms`,
        target: 1,
        kind: "max",
        unit: "ms",
      }),
    ],
    data: {
      rounds: Object.fromEntries(results),
      allCancelled,
      engine,
      subjects: Object.fromEntries(
        SUBJECTS.map((s) => [
          s.key,
          {
            label: s.label,
            bySize: sizes.map((n) => ({
              n,
              cancels: med(s.key, n, (x) => x.cancels),
              prompt: med(s.key, n, (x) => x.prompt),
              total: med(s.key, n, (x) => x.total),
            })),
          },
        ]),
      ),
    },
  };
}
