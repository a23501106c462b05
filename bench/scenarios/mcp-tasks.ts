/**
 * Scenario: MCP tasks (issue 34). Two figures:
 * - Stop → task `cancelled`: a real SDK 1.x task server as a subprocess over stdio (test/fixtures/mcp-task-server),
 *   whose task work is a real child process. Per sample: a task-augmented `tools/call` under a turn; once the task
 *   handle came, the turn is cancelled; measured until the client holds the `tasks/cancel` answer `cancelled`
 *   (the server wrote the status and aborted the work before answering). Goal: p50 ≤ 5 ms on loopback.
 * - Per-call cost of an untasked `tools/call` (the SDK's in-memory transport, one echo tool): the binding's
 *   `callTool` against the bare SDK `client.callTool`, interleaved round by round. With
 *   `ACP_CANCEL_BENCH_MCP_BEFORE=<path of another build's src/mcp/index.js>` that build's binding is a third
 *   cell, and the goal compares the two bindings (before/after a change: within 2%).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Job } from "../../src/core/index.js";
import { cancellableMcpClient, type McpEvent } from "../../src/mcp/index.js";
import { fixturePath } from "../../test/support/spawn-peer.js";
import { type Cell, interleave } from "../lib/interleave.js";
import type { BenchOptions } from "../lib/options.js";
import { median, percentile } from "../lib/stats.js";
import { fmt, goal, type ScenarioResult } from "../report/types.js";

type Binding = typeof cancellableMcpClient;

/** Resolves at the first event `match` accepts (from now on). */
function nextEvent(events: McpEvent[], match: (event: McpEvent) => boolean): Promise<number> {
  const from = events.length;
  return new Promise((resolve) => {
    const poll = () => (events.slice(from).some(match) ? resolve(performance.now()) : setImmediate(poll));
    poll();
  });
}

async function stopToCancelled(samples: number): Promise<number[]> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [fixturePath("mcp-task-server")], stderr: "ignore" });
  const events: McpEvent[] = [];
  let cancelledAt = Number.NaN;
  const mcp = cancellableMcpClient(new Client({ name: "bench", version: "1.0.0" }), {
    onEvent: (event) => {
      events.push(event);
      if (event.type === "task-cancel" && event.answer === "cancelled") cancelledAt = performance.now();
    },
  });
  await mcp.connect(transport);
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const turn = new Job("turn");
      const created = nextEvent(events, (e) => e.type === "task");
      const call = mcp.callTool({ name: "build", arguments: {} }, { parent: turn, task: {} }).catch(() => undefined);
      await created;
      const stop = performance.now();
      turn.cancel("session");
      await call;
      times.push(cancelledAt - stop);
    }
  } finally {
    await mcp.client.close();
  }
  return times;
}

async function echoPair(binding: Binding | undefined) {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.registerTool("echo", {}, () => ({ content: [{ type: "text" as const, text: "echo" }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "bench", version: "1.0.0" });
  if (binding === undefined) {
    await client.connect(clientSide);
    return { call: () => client.callTool({ name: "echo", arguments: {} }), close: () => client.close() };
  }
  const mcp = binding(client);
  await mcp.connect(clientSide);
  return { call: () => mcp.callTool({ name: "echo", arguments: {} }), close: () => client.close() };
}

/** Microseconds per call, over `calls` sequential calls. */
async function perCall(pair: Awaited<ReturnType<typeof echoPair>>, calls: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await pair.call();
  return ((performance.now() - t0) * 1000) / calls;
}

export async function mcpTasksScenario(options: BenchOptions): Promise<ScenarioResult> {
  const samples = options.quick ? 20 : 200;
  const stopTimes = await stopToCancelled(samples);
  const beforePath = process.env.ACP_CANCEL_BENCH_MCP_BEFORE;
  const before = beforePath === undefined
    ? undefined
    : ((await import(beforePath)) as { cancellableMcpClient: Binding }).cancellableMcpClient;
  const pairs = {
    sdk: await echoPair(undefined),
    binding: await echoPair(cancellableMcpClient),
    ...(before === undefined ? {} : { before: await echoPair(before) }),
  };
  const calls = options.quick ? 300 : 2000;
  const cells: Cell<number>[] = Object.entries(pairs).map(([key, pair]) => ({ key, run: () => perCall(pair, calls) }));
  const rounds = options.quick ? 3 : 15;
  const measured = await interleave(cells, rounds, 1);
  for (const pair of Object.values(pairs)) await pair.close();
  const us = (key: string) => median(measured.get(key) ?? []);
  const rows = Object.keys(pairs).map((key) => [key, `${us(key).toFixed(1)} µs`, `${(us(key) / us("sdk")).toFixed(3)}x`]);
  const p50 = median(stopTimes);
  const costRatio = us("binding") / us(before === undefined ? "sdk" : "before");
  return {
    id: "mcp-tasks",
    title: "MCP tasks: Stop → task cancelled (stdio), and the untasked call's cost",
    tables: [
      {
        title: `Stop → tasks/cancel answered cancelled, SDK 1.x task server over stdio (${samples} samples)`,
        columns: ["p50", "p90", "max"],
        rows: [[fmt.ms(p50), fmt.ms(percentile(stopTimes, 90)), fmt.ms(Math.max(...stopTimes))]],
      },
      {
        title: `untasked tools/call, in memory (${calls} calls × ${rounds} rounds, interleaved)`,
        columns: ["client", "per call", "vs bare SDK"],
        rows,
      },
    ],
    goals: [
      goal({ id: "mcp-task-stop-p50", description: "Stop → task cancelled p50, stdio loopback", measured: p50, target: 5, kind: "max", unit: "ms" }),
      // Without a before build the cost against the bare SDK is a table row, not a goal.
      ...(before === undefined
        ? []
        : [goal({
            id: "mcp-untasked-before-after",
            description: "untasked call: this binding / the before build's",
            measured: costRatio,
            target: 1.02,
            kind: "max",
            unit: "x",
          })]),
    ],
    data: { stopTimes, perCall: Object.fromEntries(measured) },
  };
}
