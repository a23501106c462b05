/**
 * ABP in headless Chromium, per transport:
 * - cancel latency: abort() to the app's acknowledgement, for a render in progress in the page,
 *   measured in the realm where the agent lives (Node, or the agent page for postMessage);
 * - the cost of one call against a bare round trip of the same payload on the same channel
 *   kind (postMessage to a cross-origin frame that echoes; a WebSocket the page echoes on; a bare
 *   page.evaluate), anchors and subjects interleaved round by round.
 */
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { WebSocketServer } from "ws";
import { demo, launchChromium, type Origins, startOrigins } from "../../test/abp/support/browser.js";
import { type Driver, openDriver, TRANSPORTS, type TransportName } from "../../test/abp/support/drivers.js";
import { type Cell, interleave } from "../lib/interleave.js";
import type { BenchOptions } from "../lib/options.js";
import { median, ratio } from "../lib/stats.js";
import { fmt, goal, type ScenarioResult } from "../report/types.js";

const PAYLOAD = { text: "x".repeat(1000), n: 42, list: [1, 2, 3] };

interface Measures {
  cancelMs: number[];
  callMs: number[];
  bareMs: number[];
}

/** A bare WebSocket round trip: Node sends the payload as JSON, the page parses it and sends it back. */
async function bareWebSocket(d: Driver) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const connected = new Promise<import("ws").WebSocket>((resolve) => server.once("connection", resolve));
  await d.page.evaluate((url) => {
    const socket = new WebSocket(url);
    socket.onmessage = (event) => socket.send(JSON.stringify(JSON.parse(String(event.data))));
  }, `ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const socket = await connected;
  return {
    async time(count: number): Promise<number> {
      const started = performance.now();
      for (let i = 0; i < count; i++) {
        await new Promise<void>((resolve) => {
          socket.once("message", (data) => {
            JSON.parse(String(data));
            resolve();
          });
          socket.send(JSON.stringify(PAYLOAD));
        });
      }
      return performance.now() - started;
    },
    close: () => new Promise((resolve) => {
      socket.terminate();
      server.close(resolve);
    }),
  };
}

async function measure(transport: TransportName, browser: Browser, origins: Origins, options: BenchOptions): Promise<Measures> {
  const d = await openDriver(transport, browser, origins, { maxConcurrent: 64 });
  const bareWs = transport === "websocket" ? await bareWebSocket(d) : undefined;
  try {
    await d.agent("initialize");
    if (transport === "postMessage") {
      // The anchor's echo: the stranger frame (cross-origin, no ABP on it) posts back what it gets.
      await d.stranger?.evaluate(() => {
        addEventListener("message", (event) => (event.source as Window | null)?.postMessage(event.data, event.origin));
      });
    }
    const count = options.quick ? 100 : 400;
    const bare = async () => {
      if (transport === "postMessage") {
        type AgentPage = { timeBareRoundTrips(n: number, p: unknown): Promise<number> };
        const run = ({ n, p }: { n: number; p: unknown }) => (globalThis as unknown as AgentPage).timeBareRoundTrips(n, p);
        return d.page.evaluate(run, { n: count, p: PAYLOAD });
      }
      if (bareWs !== undefined) return bareWs.time(count);
      const started = performance.now();
      for (let i = 0; i < count; i++) await d.page.evaluate((p) => p, PAYLOAD);
      return performance.now() - started;
    };
    const cells: Cell<number>[] = [
      { key: "bare", run: async () => (await bare()) / count },
      { key: "call", run: async () => (await d.agent("timeCalls", count, "echo", PAYLOAD)) / count },
    ];
    const rounds = options.quick ? 3 : 7;
    const timed = await interleave(cells, rounds, 1);
    const cancelMs: number[] = [];
    for (let i = 0; i < (options.quick ? 5 : 15); i++) {
      const key = `cancel-${i}`;
      await d.agent("start", key, "render", { width: 2048, height: 2048, rowsPerChunk: 1 });
      await demo.until(d.app, "stats.running === 1 && counters.rows > 0");
      cancelMs.push(await d.agent("timeCancel", key));
      await d.agent("outcome", key);
      await demo.until(d.app, "stats.records === 0");
    }
    return { cancelMs, callMs: timed.get("call") ?? [], bareMs: timed.get("bare") ?? [] };
  } finally {
    await bareWs?.close();
    await d.close();
  }
}

export async function abpScenario(options: BenchOptions): Promise<ScenarioResult> {
  const browser = await launchChromium();
  const origins = await startOrigins();
  const results = new Map<TransportName, Measures>();
  try {
    for (const transport of TRANSPORTS) results.set(transport, await measure(transport, browser, origins, options));
  } finally {
    await browser.close();
    await origins.close();
  }
  const rows: string[][] = [];
  const goals = [];
  const data: Record<string, unknown> = {};
  for (const [transport, m] of results) {
    const call = median(m.callMs);
    const bare = median(m.bareMs);
    const cost = ratio(call, bare);
    rows.push([transport, fmt.ms(median(m.cancelMs)), fmt.ms(Math.max(...m.cancelMs)), fmt.ms(bare), fmt.ms(call), fmt.x(cost)]);
    data[transport] = m;
    if (transport !== "playwright") {
      goals.push(
        goal({
          id: `abp-call-cost-${transport}`,
          description: `ABP call vs a bare ${transport} round trip of the same payload`,
          measured: cost,
          target: 1.2,
          kind: "max",
          unit: "x",
          label: `ABP ${transport} call`,
        }),
      );
    }
  }
  return {
    id: "abp",
    title: "ABP in headless Chromium (cancel latency, cost of a call)",
    tables: [
      {
        title: "Per transport (ms; call cost against the bare round trip of the same 1 KB payload)",
        columns: ["transport", "abort→ack p50", "abort→ack max", "bare round trip", "ABP call", "call / bare"],
        rows,
        note: "Bare round trips: postMessage to a cross-origin frame that echoes; a WebSocket the page parses and echoes; page.evaluate of the payload.",
      },
    ],
    goals,
    data,
  };
}
