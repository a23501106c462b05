/**
 * A real RAP tool server for the tests: invocations start a real process tree (a shell
 * and a grandchild that ignores SIGTERM) tracked in a CallRegistry; the cancel endpoint
 * stops it; the result goes to the callback URL whatever happened (RAP allows a result
 * after a cancel, and the runtime must cope).
 */
import { join } from "node:path";
import {
  CallRegistry,
  createNodeCancelHandler,
  invocationSchema,
  type NoticeEvent,
  type RunResult,
  runInProcessGroup,
} from "../../src/rap/index.js";
import { postToolResult } from "../../examples/cross-protocol/rap-result.js";
import { bodyOf, listen, type Listening } from "./http-support.js";

/** The shell writes its pid and the grandchild's, then waits; the grandchild ignores SIGTERM. */
const TREE = "echo scratch > \"$TMPDIR/scratch\"; echo $$ > \"$PIDFILE.tmp\"; (trap '' TERM; exec sleep 300) & echo $! >> \"$PIDFILE.tmp\"; mv \"$PIDFILE.tmp\" \"$PIDFILE\"; wait";

export interface ToolServer extends Listening {
  registry: CallRegistry;
  notices: NoticeEvent[];
  /** Each call's temp dir, once its command runs. */
  tempDirs: Map<string, string>;
  /** Each call's run, settled once its process group is gone and its temp dir removed. */
  runs: Map<string, Promise<RunResult>>;
  /** Where a call's pids are written. */
  pidFile(toolCallId: string): string;
}

export async function startToolServer(token: string, pidDir: string): Promise<ToolServer> {
  const registry = new CallRegistry();
  const notices: NoticeEvent[] = [];
  const tempDirs = new Map<string, string>();
  const runs = new Map<string, Promise<RunResult>>();
  const authentic = (authorization: string | null | undefined) => authorization === `Bearer ${token}`;
  const cancel = createNodeCancelHandler({
    registry,
    authenticate: (r) => authentic(r.headers.get("authorization")),
    onNotice: (e) => notices.push(e),
  });
  const pidFile = (id: string) => join(pidDir, `${id}.pids`);
  const listening = await listen(async (request, response) => {
    if (request.url === "/cancel_tool_call") return cancel(request, response);
    if (request.url !== "/invoke" || request.method !== "POST") return void response.writeHead(404).end();
    if (!authentic(request.headers.authorization)) return void response.writeHead(401).end();
    const parsed = invocationSchema.safeParse(JSON.parse(await bodyOf(request)));
    if (!parsed.success) return void response.writeHead(400).end();
    const invocation = parsed.data;
    // RAP: answer the invocation at once, work asynchronously.
    response.writeHead(200).end();
    const call = registry.track(invocation.group_id, invocation.id);
    const tree = invocation.arguments.command === "tree";
    const run = runInProcessGroup("sh", ["-c", tree ? TREE : "echo done"], {
      signal: call.signal,
      graceMs: 300,
      env: { PIDFILE: pidFile(invocation.id) },
      onSpawn: ({ tempDir }) => tempDirs.set(invocation.id, tempDir),
    });
    runs.set(invocation.id, run);
    const result = await run.finally(() => call.done());
    await postToolResult(invocation, result.stopped ? "Error: cancelled" : result.stdout.trim());
  });
  return { ...listening, registry, notices, tempDirs, runs, pidFile };
}
