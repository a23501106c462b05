/**
 * Scenario 2: cancel latency. N requests whose handlers wait for their signal and then
 * throw are in flight; the client aborts them all. Measured on the client's wire: from
 * the first cancel leaving to the last answer arriving (all N answered), and in the app:
 * from abort() to the last request promise settling.
 */
import { setMaxListeners } from "node:events";
import { performance as nodePerformance } from "node:perf_hooks";
import { PassThrough } from "node:stream";
import { CancellationTokenSource } from "vscode-jsonrpc/node";
import { createAcpMessageConnection } from "../../src/jsonrpc/index.js";
import { connectSdkClient, type SdkClient } from "../clients/sdk-client.js";
import { connectVscodeClient, type VscodeClient } from "../clients/vscode-client.js";
import { startPeer } from "../lib/child.js";
import { ownCpuMicros, processCpuMicros } from "../lib/cpu.js";
import { type Cell, interleaveGroups } from "../lib/interleave.js";
import { must } from "../lib/must.js";
import type { BenchOptions } from "../lib/options.js";
import { median, medianOf, overRounds, ratio } from "../lib/stats.js";
import { fmt, goal, type ScenarioResult } from "../report/types.js";

interface CancelSample {
  /** First cancel on the wire → last answer off the wire (ms). */
  wire: number;
  /** abort() → last request promise settled in the app (ms). */
  app: number;
  answered: number;
  /** CPU of the peer process (the agent) per cancelled request, abort() → all settled (µs). */
  peerCpu: number;
  /** CPU of the client's process per cancelled request, over the same window (µs). */
  clientCpu: number;
  /** How long the peer's main thread was busy, per cancelled request, over the same window (µs). */
  peerBusy: number;
  /** How long the client's main thread was busy, per cancelled request (µs). */
  clientBusy: number;
}

/** Counts what crosses the client's wire during one measurement. */
class WireWatch {
  firstCancel = Number.NaN;
  answers = 0;
  lastAnswer = Number.NaN;
  private expected = 0;
  private done: (() => void) | undefined;
  arm(expected: number): Promise<void> {
    this.firstCancel = Number.NaN;
    this.answers = 0;
    this.lastAnswer = Number.NaN;
    this.expected = expected;
    return new Promise((resolve) => {
      this.done = resolve;
    });
  }

  cancelOut(now: number) {
    if (Number.isNaN(this.firstCancel)) this.firstCancel = now;
  }

  answerIn(now: number) {
    if (this.done === undefined) return;
    this.answers++;
    this.lastAnswer = now;
    if (this.answers === this.expected) {
      this.done();
      this.done = undefined;
    }
  }
}

interface Target {
  /** The peer's process, whose CPU each measurement reads. */
  readonly pid: number | undefined;
  /** How long the peer's main thread has been busy so far (ms), asked over the connection. */
  busyMs(): Promise<number>;
  /** Issues n waiting requests; resolves once all n handlers are waiting. */
  issue(n: number): Promise<{ cancel(): void; settled: Promise<number> }>;
  close(): Promise<void>;
}

const until = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHandlers(count: () => Promise<number>, n: number) {
  for (let i = 0; (await count()) < n; i++) {
    if (i > 20_000) throw new Error(`only some of ${n} handlers started`);
    await until(1);
  }
}

/** Resolves at the time the last of `promises` settles. */
function lastSettled(promises: Promise<unknown>[]): Promise<number> {
  let last = 0;
  const mark = () => {
    last = performance.now();
  };
  return Promise.allSettled(promises.map((p) => p.then(mark, mark))).then(() => last);
}

async function sdkTarget(
  watch: WireWatch,
  wrapped: boolean,
  stopWaitingOnCancel: boolean,
  inline = false,
): Promise<Target> {
  const child = startPeer("sdk-agent", inline ? ["--inline"] : wrapped ? ["--wrapped"] : []);
  const client: SdkClient = await connectSdkClient(child, {
    wrapped,
    inline,
    tap: {
      outgoing: (m, now) => m.method === "$/cancel_request" && watch.cancelOut(now),
      incoming: (m, now) => !("method" in m) && watch.answerIn(now),
    },
  });
  const count = async () => (await client.agent.request<{ waiting: number }>("bench/count", {})).waiting;
  return {
    pid: child.proc.pid,
    busyMs: async () => (await client.agent.request<{ busyMs: number }>("bench/busy", {})).busyMs,
    async issue(n) {
      const controller = new AbortController();
      setMaxListeners(0, controller.signal); // one signal for all n requests
      const options = { cancellationSignal: controller.signal, stopWaitingOnCancel };
      const requests = Array.from({ length: n }, () => client.agent.request("bench/wait", {}, options));
      await waitForHandlers(count, n);
      return { cancel: () => controller.abort(), settled: lastSettled(requests) };
    },
    close: () => client.close(),
  };
}

async function vscodeTarget(watch: WireWatch): Promise<Target> {
  const child = startPeer("vscode-echo-server");
  const client: VscodeClient = connectVscodeClient(child, {
    outgoing: (m, now) => (m as { method?: string }).method === "$/cancelRequest" && watch.cancelOut(now),
    incoming: (m, now) => !("method" in m) && watch.answerIn(now),
  });
  const count = async () => ((await client.request("bench/count")) as { waiting: number }).waiting;
  await count();
  return {
    pid: child.proc.pid,
    busyMs: async () => ((await client.request("bench/busy")) as { busyMs: number }).busyMs,
    async issue(n) {
      const sources = Array.from({ length: n }, () => new CancellationTokenSource());
      const requests = sources.map((s) => client.request("bench/wait", s.token));
      await waitForHandlers(count, n);
      return { cancel: () => sources.forEach((s) => void s.cancel()), settled: lastSettled(requests) };
    },
    close: () => client.close(),
  };
}

/** acp-cancel's vscode-jsonrpc binding on both ends; the wire is watched line by line. */
async function vscodeBindingTarget(watch: WireWatch): Promise<Target> {
  const child = startPeer("vscode-echo-server", ["--acp"]);
  const outgoing = new PassThrough();
  outgoing.on("data", (chunk: Buffer) => {
    const now = performance.now();
    for (let at = chunk.indexOf("$/cancel_request"); at !== -1; at = chunk.indexOf("$/cancel_request", at + 1)) {
      watch.cancelOut(now);
    }
  });
  outgoing.pipe(child.proc.stdin);
  child.proc.stdout.on("data", (chunk: Buffer) => {
    const now = performance.now();
    for (let at = chunk.indexOf('"error"'); at !== -1; at = chunk.indexOf('"error"', at + 1)) watch.answerIn(now);
  });
  const connection = createAcpMessageConnection(child.proc.stdout, outgoing);
  connection.listen();
  const count = async () => (await connection.sendRequest<{ waiting: number }>("bench/count", {})).waiting;
  await count();
  return {
    pid: child.proc.pid,
    busyMs: async () => (await connection.sendRequest<{ busyMs: number }>("bench/busy", {})).busyMs,
    async issue(n) {
      const sources = Array.from({ length: n }, () => new CancellationTokenSource());
      const requests = sources.map((s) => connection.sendRequest("bench/wait", {}, s.token));
      await waitForHandlers(count, n);
      return { cancel: () => sources.forEach((s) => void s.cancel()), settled: lastSettled(requests) };
    },
    async close() {
      connection.dispose();
      await child.stop();
    },
  };
}

const SUBJECTS = [
  {
    key: "embedded",
    label: "withCancellation, both ends",
    make: (w: WireWatch) => sdkTarget(w, true, false),
  },
  {
    key: "embedded-inline",
    label: "withCancellation + acp-cancel ndJsonStream, both ends",
    make: (w: WireWatch) => sdkTarget(w, true, false, true),
  },
  {
    key: "vscode-binding",
    label: "acp-cancel vscode-jsonrpc binding, both ends",
    make: (w: WireWatch) => vscodeBindingTarget(w),
  },
  { key: "sdk", label: "bare SDK, cooperative (anchor)", make: (w: WireWatch) => sdkTarget(w, false, false) },
  {
    key: "sdk-stop",
    label: "bare SDK, stopWaitingOnCancel (anchor)",
    make: (w: WireWatch) => sdkTarget(w, false, true),
  },
  {
    key: "vscode",
    label: "vscode-jsonrpc $/cancelRequest (anchor)",
    make: (w: WireWatch) => vscodeTarget(w),
  },
] as const;
const ANCHORS = ["sdk", "sdk-stop", "vscode"];
/**
 * The anchor of the goal: the bare SDK's cooperative cancel does the same work as the
 * embedded engine (the same SDK apps; every handler answers and the app waits for each
 * answer). stopWaitingOnCancel does not wait in the app, and vscode-jsonrpc is another
 * stack: both are shown, neither is the goal's anchor.
 */
const SAME_WORK = "sdk";

const UNMEASURED: CancelSample = {
  wire: Number.NaN,
  app: Number.NaN,
  answered: 0,
  peerCpu: Number.NaN,
  clientCpu: Number.NaN,
  peerBusy: Number.NaN,
  clientBusy: Number.NaN,
};

async function measure(target: Target, watch: WireWatch, n: number): Promise<CancelSample> {
  const batch = await target.issue(n);
  const peerBusyBefore = await target.busyMs();
  const wired = watch.arm(n);
  const peerBefore = processCpuMicros(target.pid);
  const clientBefore = ownCpuMicros();
  const clientLoop = nodePerformance.eventLoopUtilization();
  const aborted = performance.now();
  batch.cancel();
  const timeout = until(30_000).then(() => "timeout" as const);
  const [settledAt, outcome] = await Promise.all([batch.settled, Promise.race([wired, timeout])]);
  const clientBusy = (nodePerformance.eventLoopUtilization(clientLoop).active * 1000) / n;
  const peerCpu = (processCpuMicros(target.pid) - peerBefore) / n;
  const clientCpu = (ownCpuMicros() - clientBefore) / n;
  if (outcome === "timeout") return { ...UNMEASURED, answered: watch.answers };
  const peerBusy = ((await target.busyMs()) - peerBusyBefore) * (1000 / n);
  const wire = watch.lastAnswer - watch.firstCancel;
  return { wire, app: settledAt - aborted, answered: watch.answers, peerCpu, clientCpu, peerBusy, clientBusy };
}

export async function cancelLatencyScenario(options: BenchOptions): Promise<ScenarioResult> {
  const many = options.cancelMany;
  const sizes = [1, many];
  const watches = new Map(SUBJECTS.map((s) => [s.key, new WireWatch()]));
  const targets = new Map<string, Target>();
  for (const s of SUBJECTS) {
    const watch = must(watches.get(s.key), s.key);
    const target = await s.make(watch);
    targets.set(s.key, target);
    await measure(target, watch, 200); // warm-up: code paths compiled, buffers grown
  }
  // The cells compared with each other (same N) run back to back in every round.
  const groups: Cell<CancelSample>[][] = sizes.map((n) =>
    SUBJECTS.map((s) => ({
      key: `${s.key}@${n}`,
      async run() {
        const target = must(targets.get(s.key), s.key);
        const watch = must(watches.get(s.key), s.key);
        if (n > 1) return measure(target, watch, n);
        // One request is quick and noisy: take the median of a few.
        const samples: CancelSample[] = [];
        for (let i = 0; i < options.cancelOneRepeats; i++) samples.push(await measure(target, watch, 1));
        // One request's CPU is below the clock's 10 ms tick: only its times are kept.
        return {
          ...UNMEASURED,
          wire: medianOf(samples, (x) => x.wire),
          app: medianOf(samples, (x) => x.app),
          answered: 1,
        };
      },
    })),
  );
  const results = await interleaveGroups(groups, options.cancelRounds);
  await Promise.all([...targets.values()].map((t) => t.close()));

  const at = (key: string, n: number) => results.get(`${key}@${n}`) ?? [];
  const wire = (key: string, n: number) => medianOf(at(key, n), (s) => s.wire);
  const app = (key: string, n: number) => medianOf(at(key, n), (s) => s.app);
  const fastestAnchor = (n: number) =>
    ANCHORS.reduce((best, key) => (wire(key, n) < wire(best, n) ? key : best), ANCHORS[0] as string);
  const fastest = fastestAnchor(many);
  // Ratio per round against the anchor that is fastest overall, then the median.
  const wireRatios = (key: string, anchor: string) =>
    at(key, many).map((s, i) => ratio(s.wire, at(anchor, many)[i]?.wire ?? Number.NaN));
  const perRound = (key: string, anchor: string) => median(wireRatios(key, anchor));
  const allAnswered = SUBJECTS.every((s) => at(s.key, many).every((x) => x.answered === many));

  const rows = SUBJECTS.map((s) => [
    s.label,
    fmt.ms(wire(s.key, 1)),
    fmt.ms(app(s.key, 1)),
    fmt.ms(wire(s.key, many)),
    fmt.ms(app(s.key, many)),
    fmt.x(perRound(s.key, SAME_WORK)),
    fmt.x(ratio(wire(s.key, many), wire(fastest, many))),
  ]);
  // Each process's work per cancel, and its per-round ratio to the bare SDK pair's: the wire
  // time follows the main thread that is busy throughout, and this says which, and by how much.
  const perCancel = (key: string, pick: (s: CancelSample) => number) => medianOf(at(key, many), pick);
  const perCancelRatios = (key: string, pick: (s: CancelSample) => number) =>
    at(key, many).map((s, i) => ratio(pick(s), pick(at(SAME_WORK, many)[i] as CancelSample)));
  const perCancelVsSdk = (key: string, pick: (s: CancelSample) => number) => median(perCancelRatios(key, pick));
  const peerCpu = (s: CancelSample) => s.peerCpu;
  const clientCpu = (s: CancelSample) => s.clientCpu;
  const peerBusy = (s: CancelSample) => s.peerBusy;
  const clientBusy = (s: CancelSample) => s.clientBusy;
  const cpuRows = SUBJECTS.map((s) => [
    s.label,
    fmt.ms(wire(s.key, many)),
    fmt.us(perCancel(s.key, peerBusy)),
    fmt.x(perCancelVsSdk(s.key, peerBusy)),
    fmt.us(perCancel(s.key, peerCpu)),
    fmt.us(perCancel(s.key, clientBusy)),
    fmt.x(perCancelVsSdk(s.key, clientBusy)),
    fmt.us(perCancel(s.key, clientCpu)),
  ]);
  const figures = (key: string, anchor: string) =>
    `${anchor}: ${fmt.ms(wire(anchor, many))} ms; subject: ${fmt.ms(wire(key, many))} ms`;
  return {
    id: "cancel",
    title: "2. Cancel latency",
    tables: [
      {
        title: `Cancel 1 and ${many.toLocaleString("en-US")} in-flight requests`,
        columns: [
          "subject",
          "wire ms, 1",
          "app ms, 1",
          `wire ms, ${many}`,
          `app ms, ${many}`,
          `wire vs bare SDK cooperative, ${many}`,
          `wire vs fastest anchor, ${many}`,
        ],
        rows,
        note:
          "wire: first cancel notification leaving the client → last answer arriving at the client (every request answered" +
          `${allAnswered ? ", checked" : ", NOT all answered"}). app: abort() → last request promise settled; ` +
          "with stopWaitingOnCancel the SDK rejects locally at once, but the agent's answers still take the wire time. " +
          "'vs bare SDK cooperative' is the median of per-round ratios (the goal); 'vs fastest anchor' compares " +
          `medians with the fastest anchor overall (${fastest}).`,
      },
      {
        title: `Work per cancel, ${many.toLocaleString("en-US")} in flight: the agent's process and the client's`,
        columns: [
          "subject",
          `wire ms, ${many}`,
          "agent busy µs",
          "agent busy vs bare SDK",
          "agent CPU µs",
          "client busy µs",
          "client busy vs bare SDK",
          "client CPU µs",
        ],
        rows: cpuRows,
        note:
          "Per cancelled request, from abort() until every answer is in and every request promise settled. Busy: " +
          "the time the process's main thread was not waiting in its event loop (event-loop utilisation; the agent " +
          "reports its own over the connection). CPU: user + system of every thread, GC helpers included (/proc for " +
          "the agent, process.cpuUsage for the client's process, which also hosts the idle targets of the other " +
          "subjects). The client's figures include abort() itself, where the SDK client removes one listener per " +
          "request from the shared signal. Ratios are medians of per-round ratios to the bare SDK pair. The two " +
          "processes work at once on two cores: the wire time follows the main thread that is busy throughout.",
      },
    ],
    goals: [
      // Wrapping the SDK's stream, the SDK's own work per cancel is out of a wrapper's reach:
      // the goal is what acp-cancel adds to the agent's main thread (issue 24's goals).
      goal({
        id: "cancel-10k-agent",
        label: `cancel ${many / 1000}k agent thread / SDK`,
        description: `Cancelling ${many.toLocaleString("en-US")} in-flight requests, embedded wrapping the SDK's ndJsonStream: the agent's main-thread time per cancel vs the bare SDK agent's (cooperative cancel)`,
        ...overRounds(perCancelRatios("embedded", peerBusy)),
        anchor: `sdk: ${fmt.us(perCancel(SAME_WORK, peerBusy))} µs; subject: ${fmt.us(perCancel("embedded", peerBusy))} µs`,
        target: 1.1,
        kind: "max",
        unit: "x",
      }),
      goal({
        id: "cancel-10k-inline",
        label: `cancel ${many / 1000}k inline / SDK cooperative`,
        description: `Cancelling ${many.toLocaleString("en-US")} in-flight requests (wire time), embedded on acp-cancel's ndJsonStream vs the bare SDK's cooperative cancel`,
        ...overRounds(wireRatios("embedded-inline", SAME_WORK)),
        anchor: figures("embedded-inline", SAME_WORK),
        target: 1,
        kind: "max",
        unit: "x",
      }),
      goal({
        id: "cancel-10k-vscode",
        label: `cancel ${many / 1000}k vscode binding / stock`,
        description: `Cancelling ${many.toLocaleString("en-US")} in-flight requests (wire time), acp-cancel's vscode-jsonrpc binding vs stock vscode-jsonrpc`,
        ...overRounds(wireRatios("vscode-binding", "vscode")),
        anchor: figures("vscode-binding", "vscode"),
        target: 1,
        kind: "max",
        unit: "x",
      }),
    ],
    data: {
      rounds: Object.fromEntries(results),
      fastestAnchor: fastest,
      allAnswered,
      subjects: Object.fromEntries(
        SUBJECTS.map((s) => [
          s.key,
          {
            label: s.label,
            one: { wire: wire(s.key, 1), app: app(s.key, 1) },
            many: {
              n: many,
              wire: wire(s.key, many),
              app: app(s.key, many),
              agentBusyMicrosPerCancel: perCancel(s.key, peerBusy),
              agentCpuMicrosPerCancel: perCancel(s.key, peerCpu),
              clientBusyMicrosPerCancel: perCancel(s.key, clientBusy),
              clientCpuMicrosPerCancel: perCancel(s.key, clientCpu),
            },
          },
        ]),
      ),
    },
  };
}
