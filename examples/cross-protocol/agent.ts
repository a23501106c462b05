/**
 * The cross-protocol demo's ACP agent: @agentclientprotocol/sdk 2.4.0, adopted with one line.
 * Its prompt turn starts four pieces of work at once, each in another protocol, and hands each
 * the turn's job with `{ parent: jobOf(ctx) }`:
 *   - MCP: `search` on an MCP server it spawned over stdio, a task whose work is a child process;
 *   - RAP: a tool call dispatched to an HTTP tool server, which runs a child process;
 *   - A2A: a task on a remote A2A agent, its cancel guarded by an AOS guardian;
 *   - ABP: `render` in a browser app in headless Chromium (when there is a Chromium).
 * Nothing in the handler deals with cancellation. `session/cancel` from the editor cancels the
 * turn's job, and each binding sends its own protocol's cancel; the turn is answered
 * `cancelled` once every piece has settled.
 *
 *   node agent.js --mcp-server FILE --rap URL --rap-token T --a2a URL --guardian URL [--abp PAGE_URL] [--grace-ms N]
 *
 * What it sends and sees goes to stderr as `CROSS {json}` lines; `_cross/state` answers what
 * is still in flight in each binding.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable, Writable } from "node:stream";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";
import * as acp from "@agentclientprotocol/sdk";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { GetTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Browser, chromium, type Page } from "playwright-core";
import { A2aTaskLinks, cancelGuardInterceptor, GuardianClient } from "../../src/a2a/index.js";
import { AbpClient, playwrightTransport } from "../../src/abp/index.js";
import { jobOf, type MessageStream, withCancellation } from "../../src/index.js";
import { cancellableMcpClient } from "../../src/mcp/index.js";
import { otelRequested } from "../../src/otel/requested.js";
import { bearerSigner, RapRuntime } from "../../src/rap/index.js";
import { otelEnvironment, traceThisProcess } from "../otel/trace-process.js";
import { textTaskRequest } from "./a2a-request.js";
import { message, note, now, report } from "./events.js";
import { observeWrites } from "./observe-writes.js";
import { exportPageSpans } from "./page-spans.js";

// ---- tracing (when the demo asks, by OTEL_EXPORTER_OTLP_ENDPOINT): the service "acp-agent" ----
const tracing = otelRequested(false);
const flushTracing = await traceThisProcess("acp-agent");
const otel = tracing ? await import("../../src/otel/index.js") : undefined;

const args = process.argv.slice(2);
const option = (name: string) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};
const required = (name: string) => {
  const value = option(name);
  if (value === undefined) throw new Error(`agent.js needs ${name}`);
  return value;
};
const graceMs = option("--grace-ms");
const stubbornA2a = args.includes("--a2a-stubborn");

// ---- MCP: a server over stdio, its requests children of the turn ----------------------------
// The SDK hands a server only a safe subset of the environment: the OTEL_* variables are passed on here.
const mcpTransport = new StdioClientTransport({
  command: process.execPath,
  args: [required("--mcp-server")],
  stderr: "pipe",
  env: { ...getDefaultEnvironment(), ...otelEnvironment() },
});
mcpTransport.stderr?.on("data", (chunk: Buffer) => process.stderr.write(chunk));
const mcpSend = mcpTransport.send.bind(mcpTransport);
/** The method of each request sent, by id: a `notifications/cancelled` names the request it cancels. */
const mcpMethods = new Map<unknown, string>();
mcpTransport.send = (sent) => {
  if ("method" in sent && "id" in sent) mcpMethods.set(sent.id, sent.method);
  if ("method" in sent && (sent.method === "tools/call" || sent.method === "tasks/cancel")) {
    report(message("MCP", "agent", "mcp-server", sent.method));
  }
  if ("method" in sent && sent.method === "notifications/cancelled") {
    report(message("MCP", "agent", "mcp-server", `notifications/cancelled (${mcpMethods.get(sent.params?.requestId) ?? "?"})`));
  }
  return mcpSend(sent);
};
/** The task the server answered `search` with. */
let mcpTaskId: string | undefined;
const mcp = cancellableMcpClient(new McpClient({ name: "cross-agent", version: "1.0.0" }), {
  label: "search-server",
  onEvent: (event) => {
    if (event.type === "task") mcpTaskId = event.taskId;
    if (event.type === "task-cancel") report(note("MCP", "agent", `tasks/cancel answered ${event.answer}`));
  },
});
await mcp.connect(mcpTransport);
/** The task's status now (`tasks/get`), or null before there is a task. */
const mcpTaskStatus = async () =>
  mcpTaskId === undefined ? null : (await mcp.request<{ status: string }>({ method: "tasks/get", params: { taskId: mcpTaskId } }, GetTaskResultSchema)).status;

// ---- RAP: the runtime, and the callback endpoint its tool server posts results to -------------
const rapUrl = required("--rap");
const rap = new RapRuntime({
  servers: [rapUrl],
  signer: bearerSigner(required("--rap-token")),
  onEvent: (event) => {
    if (event.type === "cancel-notice") {
      // The runtime reports a notice when its POST ended; `ms` counts from when it began sending.
      const answeredAt = now();
      report({ ...message("RAP", "agent", "rap-tool-server", "POST /cancel_tool_call"), at: answeredAt - event.ms });
      report({ ...note("RAP", "agent", `cancel notice answered ${event.status ?? event.result} (${event.ms.toFixed(1)} ms after it was sent)`), at: answeredAt });
    }
    if (event.type === "late-result") report(note("RAP", "agent", `late tool_result for ${event.toolCallId} ignored`));
  },
});
const callbacks = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString()));
  request.on("end", () => {
    try {
      rap.deliver(JSON.parse(body));
      response.end();
    } catch (error) {
      response.writeHead(400).end(String(error));
    }
  });
});
await new Promise<void>((resolve) => callbacks.listen(0, "127.0.0.1", resolve));
const callbackUrl = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/results`;

// ---- A2A: a client whose cancels the guardian checks first ------------------------------------
const self = { name: "Cross-protocol coding agent", version: "0.1.0", url: "stdio://cross-agent" };
const a2a = await new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    clientConfig: { interceptors: [cancelGuardInterceptor({ guardian: new GuardianClient({ url: required("--guardian") }), self })] },
  }),
).createFromUrl(required("--a2a"));

// ---- ABP: a browser app in headless Chromium, driven through Playwright -----------------------
const abpPage = option("--abp");
let browser: Browser | undefined;
let page: Page | undefined;
let abp: AbpClient | undefined;
if (abpPage !== undefined) {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage();
  await page.goto(abpPage);
  await page.waitForFunction(() => (globalThis as { demo?: { ready?: boolean } }).demo?.ready === true);
  const transport = playwrightTransport(page);
  const request = transport.request.bind(transport);
  transport.request = (type, payload, ...rest) => {
    if ("capability" in payload) report(message("ABP", "agent", "browser-app", `call ${payload.capability}`));
    else if (type === "capabilities/cancel") report(message("ABP", "agent", "browser-app", type));
    return request(type, payload, ...rest);
  };
  abp = new AbpClient(transport);
  await abp.initialize();
}

/** One A2A task for the turn: started, linked to the turn's job, waited for until it ends. */
async function a2aTask(parent: ReturnType<typeof jobOf>): Promise<void> {
  report(message("A2A", "agent", "a2a-agent", "SendMessage"));
  // While tracing, the message's metadata carries the turn's context: the remote task joins the trace.
  const sent = await a2a.sendMessage(textTaskRequest(stubbornA2a ? "stubborn 100000" : "write 100000", otel?.traceContext(parent)));
  if (!("status" in sent)) return;
  const links = new A2aTaskLinks({
    client: a2a,
    ...(parent === undefined ? {} : { parent }),
    reasoning: "The user pressed Stop in the editor.",
    onOutcome: (outcome) => report(note("A2A", "agent", `tasks/cancel answered: ${outcome.outcome}`)),
  });
  links.add(sent.id);
  await links.idle();
  links.close();
}

// ---- the agent: one line to adopt acp-cancel, then plain SDK code -----------------------------
const app = withCancellation(acp.agent({ name: "cross-agent" }), graceMs === undefined ? {} : { graceMs: Number(graceMs) });
let sessions = 0;
let calls = 0;
let turnAnsweredAt: number | undefined;
/** The running turn's job, and how many of its children were still out when its answer left. */
let turn: ReturnType<typeof jobOf>;
let childrenAtAnswer: number | undefined;
app
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `session-${++sessions}` }))
  .onRequest(acp.methods.agent.session.prompt, async (ctx) => {
    const { sessionId } = ctx.params;
    const parent = jobOf(ctx); // the turn's job: hand it to every binding
    turn = parent;
    await Promise.all([
      mcp.callTool({ name: "search", arguments: { query: "cancellation" } }, { parent, task: { ttl: 60_000 } }),
      rap.invoke(`${rapUrl}/invoke`, {
        threadId: sessionId,
        toolCallId: `build-${++calls}`,
        operation: "build",
        arguments: {},
        callbackUrl,
        ...(parent === undefined ? {} : { parent }),
      }).outcome,
      a2aTask(parent),
      abp?.call("render", { width: 2048, height: 16384, rowsPerChunk: 2 }, {
        ...(parent === undefined ? {} : { parent }),
        onCancelAcknowledged: (ack) => report(note("ABP", "browser-app", `capabilities/cancel-result: cancelled ${String(ack.cancelled)}`)),
      }),
    ]);
    return { stopReason: "end_turn" };
  })
  .onRequest("*", async ({ method }) => {
    if (method !== "_cross/state") throw acp.RequestError.methodNotFound(method);
    const engine = app.cancellations[0]?.engine;
    type Demo = { demo: { counters: unknown; stats(): unknown } };
    const counters = await page?.evaluate(() => (globalThis as unknown as Demo).demo.counters);
    const stats = await page?.evaluate(() => (globalThis as unknown as Demo).demo.stats());
    return {
      // This request itself is in flight while it is answered.
      acp: { client: (engine?.inFlight.client ?? 1) - 1, agent: engine?.inFlight.agent ?? 0 },
      mcp: mcp.inFlight,
      mcpTask: { taskId: mcpTaskId ?? null, status: await mcpTaskStatus() },
      rap: rap.size,
      abp: abp?.calls.size ?? 0,
      page: counters === undefined ? null : { counters, stats },
      turnAnsweredAt: turnAnsweredAt ?? null,
      turnChildren: turn?.childCount ?? 0,
      childrenAtAnswer: childrenAtAnswer ?? null,
    };
  });

/** Notes when a prompt's answer leaves this process (after the engine decided it). */
function noteAnswers(stream: MessageStream): MessageStream {
  return observeWrites(stream, (sent) => {
    const result = (sent as { result?: { stopReason?: unknown } }).result;
    if (typeof result?.stopReason === "string") {
      turnAnsweredAt = now();
      childrenAtAnswer = turn?.childCount;
      report(note("ACP", "agent", `session/prompt answered ${result.stopReason}`));
    }
  });
}

const connection = app.connect(
  noteAnswers(
    acp.ndJsonStream(
      Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
      Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
    ) as unknown as MessageStream,
  ) as unknown as acp.Stream,
);
void connection.closed.then(async () => {
  if (tracing && page !== undefined) await exportPageSpans(page).catch((error: unknown) => process.stderr.write(`page spans: ${String(error)}\n`));
  await Promise.allSettled([mcp.client.close(), abp?.close(), browser?.close()]);
  callbacks.close();
  await flushTracing().catch((error: unknown) => process.stderr.write(`tracing: ${String(error)}\n`));
  process.exit(0);
});
