/**
 * One run of the cross-protocol showcase: starts the counterparts (RAP tool server, A2A agent
 * behind its guardian, the ABP app's static server), spawns the ACP agent, plays the editor
 * (a real SDK 2.4.0 client), prompts, waits until every protocol's work is running, presses
 * Stop (`session/cancel`) and gathers what each party saw. Used by `npm run demo:cross` and by
 * the cross-protocol test.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { type StaticServer, startStaticServer } from "../abp/static-server.js";
import { type A2aAgent, startA2aAgent } from "./a2a-agent.js";
import { type CrossEvent, eventsIn, message, now, type Protocol, WORK_ENDED } from "./events.js";
import { type RapToolServer, startRapToolServer } from "./rap-tool-server.js";
import type { DemoTracing } from "./tracing.js";

export const CHROMIUM = "/usr/bin/chromium";

export interface CrossOptions {
  /** The agent's ACP grace period (default: acp-cancel's 2000 ms). */
  graceMs?: number;
  /** The A2A task ignores its signal; the A2A executor's grace (`a2aGraceMs`) answers its cancel. */
  a2aStubborn?: boolean;
  a2aGraceMs?: number;
  /** Run the ABP part (default: when Chromium is installed). */
  abp?: boolean;
  /**
   * Export every party's jobs as spans over OTLP/HTTP to this endpoint (`http://127.0.0.1:4318`):
   * the editor, the RAP tool server and the A2A agent from this process, the ACP agent (and its
   * page's ABP app) and the MCP server from theirs. Default: no tracing.
   */
  otlpEndpoint?: string;
}

export interface AgentState {
  acp: { client: number; agent: number };
  mcp: number;
  /** The MCP task `search` became, and its status read with `tasks/get`. */
  mcpTask: { taskId: string | null; status: string | null };
  rap: number;
  abp: number;
  page: {
    counters: { rows: number; renders: number; renderAborts: number };
    stats: { running: number; controllers: number };
  } | null;
  turnAnsweredAt: number | null;
  /** Children (of every binding) of the running turn's job. */
  turnChildren: number;
  /** Children of the turn still out when its answer left the agent (0: structured). */
  childrenAtAnswer: number | null;
}

export interface CrossRun {
  abp: boolean;
  stopAt: number;
  answer: unknown;
  answeredAt: number;
  /** Every party's events, in time order. */
  events: CrossEvent[];
  /** The agent's view after the turn: what is still in flight per binding, the page's counters. */
  after: AgentState;
  /** When `after` and the processes' state were read (once both processes were gone, or 10 s). */
  lookedAt: number;
  /** The page's counters a while after the answer (unchanged: its work stopped). */
  pageLater: AgentState["page"];
  /** The MCP task's work: its child process (gone: `kill(pid, 0)` fails with ESRCH) and its status after. */
  mcp: { taskId: string | null; pid: number; stillRunning: boolean; status: string | null };
  rap: { toolCallId: string; pid: number | undefined; stillRunning: boolean; registry: number };
  a2a: { taskState: number | undefined; running: number };
  /** The turn's children just before Stop: one per protocol. */
  childrenBeforeStop: number;
  /** Prompt answers the editor received (exactly one). */
  promptAnswers: number;
  /** The trace id of the editor's turn, for a traced run (`otlpEndpoint`). */
  traceId: string | undefined;
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string, limitMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > limitMs) throw new Error(`cross-protocol demo: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether process `pid` exists: signal 0 checks without sending; ESRCH means it is gone. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The children's environment: OTEL_* only as the run asks (the demo's receiver, spans sent soon after they end). */
function childEnvironment(endpoint: string | undefined): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
  return endpoint === undefined ? env : { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "50" };
}

export async function runCrossProtocol(options: CrossOptions = {}): Promise<CrossRun> {
  const withAbp = options.abp ?? existsSync(CHROMIUM);
  const events: CrossEvent[] = [];
  const record = (event: CrossEvent) => events.push(event);
  const token = "demo-token";
  const started: { close(): Promise<void> }[] = [];
  let agentStderr = "";
  let result: Omit<CrossRun, "events">;
  try {
    let tracing: DemoTracing | undefined;
    if (options.otlpEndpoint !== undefined) {
      // Loaded only for a traced run; flushed last, after every other party is gone.
      tracing = (await import("./tracing.js")).startDemoTracing(options.otlpEndpoint);
      started.push({ close: tracing.shutdown });
    }
    const rapServer: RapToolServer = await startRapToolServer(token, record);
    started.push(rapServer);
    const a2aOptions = options.a2aGraceMs === undefined ? {} : { graceMs: options.a2aGraceMs };
    const a2aAgent: A2aAgent = await startA2aAgent(record, a2aOptions);
    started.push(a2aAgent);
    let pages: StaticServer | undefined;
    if (withAbp) {
      pages = await startStaticServer();
      started.push(pages);
    }
    const agentArgs = [
      here("./agent.js"),
      "--mcp-server", here("./mcp-server.js"),
      "--rap", rapServer.url, "--rap-token", token,
      "--a2a", a2aAgent.baseUrl, "--guardian", a2aAgent.guardianUrl,
      ...(pages === undefined ? [] : ["--abp", `${pages.origin}/examples/abp/index.html`]),
      ...(options.graceMs === undefined ? [] : ["--grace-ms", String(options.graceMs)]),
      ...(options.a2aStubborn === true ? ["--a2a-stubborn"] : []),
    ];
    const child = spawn(process.execPath, agentArgs, { stdio: ["pipe", "pipe", "pipe"], env: childEnvironment(options.otlpEndpoint) });
    child.stderr.on("data", (chunk: Buffer) => {
      agentStderr += chunk.toString();
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // Its events are read from its stderr after it exits: 'exit' can come before the last lines are
    // read. Wait for the stream's end too (bounded: a child of the agent may hold it open).
    const stderrRead = new Promise((resolve) => child.stderr.once("close", resolve));
    started.push({
      close: async () => {
        child.stdin.end();
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
        let bound: NodeJS.Timeout | undefined;
        await Promise.race([stderrRead, new Promise((resolve) => (bound = setTimeout(resolve, 2000)))]);
        clearTimeout(bound);
      },
    });
    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    );
    let promptAnswers = 0;
    const editor = acp.client({ name: "editor" });
    const run = await editor.connectWith(stream, async (agent) => {
      await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
      const state = () => agent.request<AgentState>("_cross/state", {});
      record(message("ACP", "editor", "agent", "session/prompt"));
      const turn = tracing?.editorTurn();
      const prompt = agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "Search, build, ask the story writer and render, all at once." }],
        ...(turn === undefined ? {} : { _meta: turn.meta }),
      });
      void prompt.then(() => promptAnswers++, () => promptAnswers++);
      // Every protocol's work is running before Stop is pressed.
      const taskChild = /^task \S+ runs in child process (\d+)$/;
      const mcpPid = await until(() => {
        const started = eventsIn(agentStderr).map((e) => taskChild.exec(e.label)?.[1]).find(Boolean);
        return started === undefined ? undefined : Number(started);
      }, "the MCP task's child process");
      const toolCallId = await until(() => [...rapServer.pids.keys()][0], "the RAP child process");
      const taskId = await until(() => [...a2aAgent.progress.entries()].find(([, n]) => n > 0)?.[0], "the A2A task");
      if (withAbp) await until(async () => ((await state()).page?.counters.rows ?? 0) > 0 || undefined, "the ABP render");

      const childrenBeforeStop = (await state()).turnChildren;
      const stopAt = now();
      record(message("ACP", "editor", "agent", "session/cancel (Stop)"));
      turn?.stop();
      await agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const answer = await prompt.catch((error: unknown) => ({ error: String(error) }));
      turn?.end(answer);
      const answeredAt = now();
      record({ ...message("ACP", "agent", "editor", `session/prompt answered ${JSON.stringify(answer)}`), at: answeredAt }); // one reading

      // Let late effects land (the RAP process group dying, late results), then look again: the
      // processes are gone and each party's report that its work ended is in.
      const reported = (protocol: Protocol) => {
        const agentSide = eventsIn(agentStderr.slice(0, agentStderr.lastIndexOf("\n") + 1)); // whole lines only
        return [...events, ...agentSide].some((e) => e.protocol === protocol && WORK_ENDED.test(e.label));
      };
      await until(() => (rapServer.running(toolCallId) || !reported("RAP") ? undefined : true), "the RAP child process to be gone", 10_000);
      await until(() => (alive(mcpPid) || !reported("MCP") ? undefined : true), "the MCP task's child process to be gone", 10_000).catch(() => undefined);
      const after = await state();
      const [mcpRunning, rapRunning, a2aRunning] = [alive(mcpPid), rapServer.running(toolCallId), a2aAgent.executor.running];
      const lookedAt = now();
      await new Promise((resolve) => setTimeout(resolve, 150));
      const later = await state();
      return {
        abp: withAbp,
        traceId: turn?.meta.traceparent?.split("-")[1],
        childrenBeforeStop,
        stopAt,
        answer,
        answeredAt,
        after,
        lookedAt,
        pageLater: later.page,
        mcp: { taskId: after.mcpTask.taskId, pid: mcpPid, stillRunning: mcpRunning, status: after.mcpTask.status },
        rap: {
          toolCallId,
          pid: rapServer.pids.get(toolCallId),
          stillRunning: rapRunning,
          registry: rapServer.registry.size,
        },
        a2a: { taskState: await a2aAgent.state(taskId), running: a2aRunning },
      };
    });
    result = { ...run, promptAnswers };
  } finally {
    for (const part of started.reverse()) await part.close().catch(() => undefined);
  }
  events.push(...eventsIn(agentStderr));
  events.sort((a, b) => a.at - b.at);
  return { ...result, events };
}
