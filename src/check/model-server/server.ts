/** The scripted model: a loopback HTTP server speaking whichever API the agent dials, playing the current Script. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type BodyRead, drainThenCut, readNodeBody } from "../../wire/index.js";
import { type Body, type Dialect, type DialectName, DIALECTS, type SseData } from "./dialects.js";
import { type Script, shellCall } from "./scripts.js";

/** A request body larger than this is refused (413), or slower (400): the agents' requests are far smaller and quicker. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const BODY_TIMEOUT_MS = 10_000;

export interface ModelServerOptions {
  /** The first script (default: finish with a short text). */
  script?: Script | undefined;
  /** Time between two text deltas of a held stream (default 300 ms). */
  holdTickMs?: number;
}

/** One turn request the model saw, and what became of it. */
interface TurnRecord {
  readonly dialect: DialectName;
  /** When the agent closed the request before the model finished it. */
  closedByAgentAt: number | undefined;
  finishedAt: number | undefined;
  /** The tool the model called in it, if any. */
  toolCalled?: string;
}

export interface ModelServer {
  /** The base URL, `http://127.0.0.1:PORT` (agents add their own path prefix, e.g. `/v1`). */
  readonly url: string;
  readonly port: number;
  /** The script for the next turn requests. */
  script: Script;
  readonly turns: readonly TurnRecord[];
  /** Turn requests still streaming: neither finished nor closed by the agent. */
  readonly streaming: readonly TurnRecord[];
  /** Turn requests the agent closed before the model finished them. */
  readonly closedRequests: readonly TurnRecord[];
  close(): Promise<void>;
}

/** Starts the scripted model on a free loopback port. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const turns: TurnRecord[] = [];
  const holdTickMs = options.holdTickMs ?? 300;
  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const model: ModelServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    script: options.script ?? { kind: "finish", text: "hello from the scripted model" },
    turns,
    get streaming() {
      return turns.filter((t) => t.finishedAt === undefined && t.closedByAgentAt === undefined);
    },
    get closedRequests() {
      return turns.filter((t) => t.closedByAgentAt !== undefined);
    },
    async close() {
      server.closeAllConnections(); // a held stream's too
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return model;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? "").split("?")[0] ?? "";
    const read = await new Promise<BodyRead>((resolve) => readNodeBody(request, MAX_BODY_BYTES, BODY_TIMEOUT_MS, resolve));
    const body = read.ok ? jsonObject(read.text) : undefined;
    if (body === undefined) {
      response.writeHead(!read.ok && read.problem === "too-large" ? 413 : 400).end();
      return drainThenCut(request);
    }
    const dialect = DIALECTS.find((d) => d.serves(path));
    if (dialect === undefined || request.method !== "POST") return void response.writeHead(404).end();
    const offered = dialect.offeredTools(body);
    if (offered.length === 0) {
      const quick = dialect.quick(path, body);
      if (typeof quick === "string") return sse(dialect, response, [...dialect.opening(), ...dialect.finish(quick)], true);
      return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(quick));
    }
    const turn: TurnRecord = { dialect: dialect.name, closedByAgentAt: undefined, finishedAt: undefined };
    turns.push(turn);
    response.on("close", () => {
      if (turn.finishedAt === undefined) turn.closedByAgentAt = Date.now();
    });
    response.on("finish", () => {
      turn.finishedAt ??= Date.now();
    });
    const script = model.script;
    if (script.kind === "slow") await sleep(script.delayMs);
    if (response.destroyed) return;
    const afterTool = dialect.carriesToolResult(body);
    const holds = script.kind === "hold" || script.kind === "slow" || (script.kind === "shell" && script.then === "hold" && afterTool);
    if (holds) {
      sse(dialect, response, dialect.opening());
      for (let i = 0; !response.destroyed; i++) {
        sse(dialect, response, dialect.text(i === 0 ? "working" : ".", i === 0));
        await sleep(holdTickMs);
      }
      return;
    }
    const answer = (events: SseData[]) => sse(dialect, response, [...dialect.opening(), ...events], true);
    if (script.kind === "finish") return answer(dialect.finish(script.text));
    if (afterTool) return answer(dialect.finish(script.text ?? "done"));
    const call = shellCall(offered, script.command, script.kind === "permission");
    if (call === undefined) return answer(dialect.finish(`no shell tool among: ${offered.join(", ")}`));
    turn.toolCalled = call.name;
    answer(dialect.toolCall(call.name, call.args));
  }
}

function jsonObject(text: string): Body | undefined {
  try {
    const parsed: unknown = JSON.parse(text || "{}");
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Body) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes events of a streamed answer (the headers first), and ends it if told; nothing once the agent closed it. */
function sse(dialect: Dialect, response: ServerResponse, events: readonly SseData[], end = false): void {
  if (!response.headersSent) response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const data of events) {
    if (response.destroyed || response.writableEnded) return;
    const event = dialect.namedEvents && typeof data !== "string" ? `event: ${String(data.type)}\n` : "";
    response.write(`${event}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }
  if (end) response.end();
}

// Unref'd: a slow script's wait must not keep the process alive once the server is closed.
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
