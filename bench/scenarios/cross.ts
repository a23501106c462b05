/**
 * Scenario: the cross-protocol fan-out. An embedded engine's prompt turn has children of four
 * other bindings in flight: an MCP tool call (the real MCP SDK client and server, in memory),
 * a RAP tool call (RapRuntime), a linked A2A task (A2aTaskLinks) and an ABP call (AbpClient).
 * `session/cancel` goes in; measured until the last protocol's cancel has been handed to its
 * transport (MCP's `notifications/cancelled`, RAP's `POST /cancel_tool_call` to fetch, A2A's
 * `cancelTask`, ABP's `capabilities/cancel`, plus the engine's `$/cancel_request`). The sends
 * themselves are recorded at the transport boundary (no network), so the figure is the fan-out.
 * Anchor, interleaved round by round: the ACP-only cascade of the same size (the turn with four
 * nested ACP requests: five `$/cancel_request` out). Goal: the cross-protocol fan-out adds at
 * most 1 ms on top of the ACP-only one.
 */
import type { Task } from "@a2a-js/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { A2aTaskLinks } from "../../src/a2a/index.js";
import { AbpClient, type AbpTransport } from "../../src/abp/index.js";
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import { cancellableMcpClient } from "../../src/mcp/index.js";
import { RapRuntime } from "../../src/rap/index.js";
import { interleave } from "../lib/interleave.js";
import type { BenchOptions } from "../lib/options.js";
import { median, percentile } from "../lib/stats.js";
import { fmt, goal, type ScenarioResult } from "../report/types.js";

const now = () => performance.now();

/** Resolves when `count` sends have been recorded; keeps the time of the last. */
class SendWatch {
  last = Number.NaN;
  private left = 0;
  private done: (() => void) | undefined;
  arm(count: number): Promise<void> {
    this.left = count;
    return new Promise((resolve) => {
      this.done = resolve;
    });
  }

  sent(): void {
    this.last = now();
    if (--this.left === 0) this.done?.();
  }
}

const watch = new SendWatch();

/** An engine whose turn (client request 1 of session s) is handled by an in-process agent. */
function engineWithTurn(): { engine: CancelEngine; turn: NonNullable<ReturnType<CancelEngine["job"]>> } {
  const engine = new CancelEngine(
    (_side: Side, message) => {
      if ("method" in message && message.method === "$/cancel_request") watch.sent();
    },
    { agent: { inProcess: true }, client: { cancelSupport: "yes" } },
  );
  engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
  const turn = engine.job("client", 1);
  if (turn === undefined) throw new Error("bench cross: no turn job");
  return { engine, turn };
}

const sessionCancel = { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } };

/** The real MCP SDK on both ends of an in-memory transport; the client's sends are watched. */
async function mcpPair() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  let started: (() => void) | undefined;
  server.registerTool("wait", {}, async (extra) => {
    started?.();
    await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }));
    return { content: [] };
  });
  await server.connect(serverSide);
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => {
    if ("method" in message && message.method === "notifications/cancelled") watch.sent();
    return send(message, options);
  };
  const mcp = cancellableMcpClient(new Client({ name: "bench", version: "1.0.0" }));
  await mcp.connect(clientSide);
  return {
    mcp,
    running: () =>
      new Promise<void>((resolve) => {
        started = resolve;
      }),
    close: () => mcp.client.close(),
  };
}

const rap = new RapRuntime({
  servers: ["http://127.0.0.1:9"],
  fetch: ((input: RequestInfo | URL) => {
    if (String(input).endsWith("/cancel_tool_call")) watch.sent();
    return Promise.resolve(new Response(null, { status: 200 }));
  }) as typeof fetch,
});

const a2aClient = {
  cancelTask: () => {
    watch.sent();
    return Promise.resolve({ id: "task", status: { state: 5 } } as unknown as Task);
  },
};

/** An ABP transport at its boundary: a call waits until its cancel arrives. */
function abpTransport(): AbpTransport {
  const pending = new Map<string, () => void>();
  const request = (type: string, payload: { callId?: string }) => {
    const callId = payload.callId ?? "";
    if (type === "capabilities/call") return new Promise((resolve) => pending.set(callId, () => resolve({ success: false, cancelled: true })));
    watch.sent();
    pending.get(callId)?.();
    return Promise.resolve({ callId, cancelled: true });
  };
  return {
    closedWith: undefined,
    request: request as AbpTransport["request"],
    shutdown: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}
const abp = new AbpClient(abpTransport());

let calls = 0;

/** session/cancel in → last of the five cancels out (ms), with one child of each other binding. */
async function crossOnce(mcp: Awaited<ReturnType<typeof mcpPair>>): Promise<number> {
  const { engine, turn } = engineWithTurn();
  const running = mcp.running();
  const mcpCall = mcp.mcp.callTool({ name: "wait", arguments: {} }, { parent: turn }).catch(() => undefined);
  await running;
  const rapCall = rap.dispatch({ threadId: "s", toolCallId: `c${++calls}`, parent: turn });
  const links = new A2aTaskLinks({ client: a2aClient, parent: turn });
  links.add(`task-${calls}`);
  const abpCall = abp.call("render", {}, { parent: turn });
  const allSent = watch.arm(5);
  const started = now();
  engine.receive("client", sessionCancel);
  await allSent;
  const elapsed = watch.last - started;
  engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
  await Promise.all([mcpCall, rapCall.outcome, links.idle(), abpCall]);
  links.close();
  if (engine.inFlight.client + engine.inFlight.agent + mcp.mcp.inFlight + rap.size + abp.calls.size !== 0) {
    throw new Error("bench cross: jobs left in flight");
  }
  return elapsed;
}

/** The ACP-only cascade of the same size: four nested agent requests under the turn. */
async function acpOnce(): Promise<number> {
  const { engine } = engineWithTurn();
  for (let id = 0; id < 4; id++) {
    engine.receive("agent", { jsonrpc: "2.0", id, method: "fs/read_text_file", params: { sessionId: "s", path: "/x" } });
  }
  const allSent = watch.arm(5);
  const started = now();
  engine.receive("client", sessionCancel);
  await allSent;
  const elapsed = watch.last - started;
  for (let id = 0; id < 4; id++) engine.receive("client", { jsonrpc: "2.0", id, error: { code: -32800, message: "cancelled" } });
  engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
  if (engine.inFlight.client + engine.inFlight.agent !== 0) throw new Error("bench cross: ACP jobs left in flight");
  return elapsed;
}

export async function crossScenario(options: BenchOptions): Promise<ScenarioResult> {
  const mcp = await mcpPair();
  const repeats = options.quick ? 20 : 100;
  const rounds = options.quick ? 3 : 10;
  try {
    const samples = await interleave(
      [
        {
          key: "cross",
          run: async () => {
            const values: number[] = [];
            for (let i = 0; i < repeats; i++) values.push(await crossOnce(mcp));
            return values;
          },
        },
        {
          key: "acp",
          run: async () => {
            const values: number[] = [];
            for (let i = 0; i < repeats; i++) values.push(await acpOnce());
            return values;
          },
        },
      ],
      rounds,
      1,
    );
    const cross = (samples.get("cross") ?? []).flat();
    const acp = (samples.get("acp") ?? []).flat();
    const crossMedian = median(cross);
    const acpMedian = median(acp);
    const added = crossMedian - acpMedian;
    return {
      id: "cross",
      title: "Cross-protocol fan-out: session/cancel in → the last protocol's cancel out",
      tables: [
        {
          title: "One turn, five cancels out (median and p90 over all samples, ms)",
          columns: ["cascade", "median", "p90", "samples"],
          rows: [
            ["ACP only: 4 nested ACP requests + the turn (anchor)", fmt.ms(acpMedian), fmt.ms(percentile(acp, 90)), String(acp.length)],
            ["MCP + RAP + A2A + ABP children + the turn", fmt.ms(crossMedian), fmt.ms(percentile(cross, 90)), String(cross.length)],
            ["added by the cross-protocol fan-out", fmt.ms(added), "", ""],
          ],
          note: "Sends recorded at each transport's boundary (no network): the figure is the fan-out itself.",
        },
      ],
      goals: [
        goal({
          id: "cross.fanout-added",
          description: "the cross-protocol fan-out adds at most 1 ms to the ACP-only cascade of the same size",
          measured: added,
          target: 1,
          kind: "max",
          unit: "ms",
          label: "cross fan-out added",
        }),
      ],
      data: { cross, acp },
    };
  } finally {
    await mcp.close();
  }
}
