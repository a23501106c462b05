/**
 * The demo's RAP tool server on loopback: `POST /invoke` starts a real child process (a shell
 * "build" that ticks until stopped) in its own process group, tracked in a CallRegistry;
 * `POST /cancel_tool_call` is acp-cancel's endpoint, which stops that process group. The
 * result goes to the runtime's callback URL whatever happened (RAP allows a late result).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CallRegistry,
  createNodeCancelHandler,
  groupRunning,
  invocationSchema,
  type RunResult,
  runInProcessGroup,
} from "../../src/rap/index.js";
import { type CrossEvent, message, note } from "./events.js";
import { postToolResult } from "./rap-result.js";

export interface RapToolServer {
  url: string;
  registry: CallRegistry;
  /** The process group of each call's child process. */
  pids: Map<string, number>;
  /** Each call's run: settles once its process group is gone. */
  runs: Map<string, Promise<RunResult>>;
  /** True while a call's process group still has a live process. */
  running(toolCallId: string): boolean;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
      if (body.length > MAX_BODY) reject(new Error("body too large"));
    });
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}

export async function startRapToolServer(token: string, onEvent: (event: CrossEvent) => void): Promise<RapToolServer> {
  const registry = new CallRegistry();
  const pids = new Map<string, number>();
  const runs = new Map<string, Promise<RunResult>>();
  const authentic = (value: string | null | undefined) => value === `Bearer ${token}`;
  const cancel = createNodeCancelHandler({
    registry,
    authenticate: (request) => authentic(request.headers.get("authorization")),
    onNotice: (notice) => {
      if (notice.status === 200) onEvent(note("RAP", "rap-tool-server", `cancel notice for ${notice.toolCallId ?? "?"}: ${notice.effect ?? "?"}`));
    },
  });
  const server: Server = createServer((request, response) => {
    if (request.url === "/cancel_tool_call") {
      onEvent(note("RAP", "rap-tool-server", "POST /cancel_tool_call received"));
      cancel(request, response);
      return;
    }
    if (request.url !== "/invoke" || request.method !== "POST") return void response.writeHead(404).end();
    if (!authentic(request.headers.authorization)) return void response.writeHead(401).end();
    void bodyOf(request)
      .then(async (text) => {
        const parsed = invocationSchema.safeParse(JSON.parse(text));
        if (!parsed.success) return void response.writeHead(400).end(parsed.error.message);
        const invocation = parsed.data;
        onEvent(message("RAP", "agent", "rap-tool-server", `POST /invoke ${invocation.id}`));
        response.writeHead(200).end(); // RAP: accept at once, work asynchronously
        // While tracing, the call joins the agent's trace by the invocation's W3C headers.
        const call = registry.track(invocation.group_id, invocation.id, { traceHeaders: request.headers });
        const run = runInProcessGroup("sh", ["-c", "while :; do echo tick >> \"$TMPDIR/build.log\"; sleep 0.05; done"], {
          signal: call.signal,
          graceMs: 500,
          onSpawn: ({ pid }) => {
            pids.set(invocation.id, pid);
            onEvent(note("RAP", "rap-tool-server", `child process ${pid} started (a build)`));
          },
        });
        runs.set(invocation.id, run);
        const result = await run.finally(() => call.done());
        onEvent(note("RAP", "rap-tool-server", `child process ${pids.get(invocation.id) ?? "?"} gone (${result.signal ?? `exit ${String(result.code)}`})`));
        await postToolResult(invocation, result.stopped ? "Error: cancelled" : "built");
      })
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(400).end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    registry,
    pids,
    runs,
    running: (id) => {
      const pid = pids.get(id);
      return pid !== undefined && groupRunning(pid);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
