/**
 * One replica of a RAP tool server, as a real process: acp-cancel/rap's node:http cancel
 * endpoint on a CallRegistry replicated over a cancel bus. POST /invoke?thread=T&call=C runs a
 * call (a step every 20 ms, owned by the principal named in `owner`, default "alice") until its
 * signal aborts and answers what it did; POST /run?thread=T&call=C runs `sleep 30` with
 * runInProcessGroup right after tracking the call and answers how it ended; GET /forwarded
 * lists what notices forwarded to other replicas achieved (GET /notices: what onNotice reported);
 * POST /tool?marker=PATH&delay=S starts a tool (`sh`, and a `setsid` child of it) that writes
 * PATH.group and PATH.setsid after S seconds.
 *
 * Environment: BACKEND (postgres|redis), BUS_URL, REPLICA, REMEMBER_MS, PORT (optional).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { CallRegistry, createNodeCancelHandler, runInProcessGroup } from "../../src/rap/index.js";
import { postgresCancelBus, redisCancelBus, replicateCalls } from "../../src/replicas/index.js";
import type { ForwardedNotice } from "../../src/replicas/rap-calls.js";

/** Each token authenticates one principal: notices cancel only that principal's calls. */
const PRINCIPALS = new Map([
  ["Bearer replica-test", "alice"],
  ["Bearer replica-other", "mallory"],
]);
const replica = process.env.REPLICA ?? "?";
const rememberMs = Number(process.env.REMEMBER_MS ?? 60_000);
const open = process.env.BACKEND === "postgres" ? postgresCancelBus : redisCancelBus;
const bus = await open(process.env.BUS_URL ?? "", { replica, rememberMs });
const forwarded: { threadId: string; toolCallId: string; outcome: string; message?: string }[] = [];
const registry = replicateCalls(new CallRegistry({ rememberMs }), bus, {
  onForwarded: ({ threadId, toolCallId, outcome }: ForwardedNotice) => {
    forwarded.push({ threadId, toolCallId, outcome: outcome.kind, ...(outcome.kind === "error" ? { message: outcome.error.message } : {}) });
  },
});
/** What onNotice reported: the local effect and, for a forwarded notice, the forwarding's outcome. */
const notices: { toolCallId: string | undefined; effect: string | undefined; forwarded?: string; forwardedBy?: string }[] = [];
const cancelEndpoint = createNodeCancelHandler({
  registry,
  onNotice: ({ toolCallId, effect, forwarded }) => {
    const by = forwarded !== undefined && "replica" in forwarded ? { forwardedBy: String(forwarded.replica) } : {};
    notices.push({ toolCallId, effect, ...(forwarded !== undefined ? { forwarded: forwarded.kind } : {}), ...by });
  },
  authenticate: (request) => PRINCIPALS.get(request.headers.get("authorization") ?? "") ?? false,
  rateLimit: false,
});

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://replica");
  const json = (body: unknown) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ replica, ...(body as object) }));
  };
  if (url.pathname === "/cancel_tool_call") return cancelEndpoint(request, response);
  if (url.pathname === "/forwarded") return json({ forwarded });
  if (url.pathname === "/notices") return json({ notices });
  if (url.pathname === "/calls") return json({ running: registry.size });
  if (url.pathname === "/run") {
    // A real command (sleep 30) in its process group, started right after the call is tracked.
    const call = registry.track(url.searchParams.get("thread") ?? "", url.searchParams.get("call") ?? "", { owner: "alice" });
    const tracked = performance.now();
    let abortedAfterMs: number | undefined;
    call.signal.addEventListener("abort", () => (abortedAfterMs = performance.now() - tracked), { once: true });
    if (call.signal.aborted) abortedAfterMs = 0;
    void runInProcessGroup("sleep", ["30"], { signal: call.signal, graceMs: 200 }).then((result) => {
      call.done();
      json({ stopped: result.stopped, code: result.code, ms: performance.now() - tracked, abortedAfterMs });
    });
    return;
  }
  if (url.pathname === "/tool") {
    // A tool that writes marker files after a delay: one from its own process group, one from a
    // process it moved to a session of its own (setsid). Answers once both are started.
    const marker = url.searchParams.get("marker") ?? "";
    const delay = url.searchParams.get("delay") ?? "3";
    const call = registry.track(url.searchParams.get("thread") ?? "", url.searchParams.get("call") ?? "", { owner: "alice" });
    const script = `setsid sh -c 'sleep ${delay}; : > "$1.setsid"' tool "$1" & sleep ${delay}; : > "$1.group"; wait`;
    void runInProcessGroup("sh", ["-c", script, "tool", marker], {
      signal: call.signal,
      graceMs: 200,
      onSpawn: ({ pid, tempDir }) => json({ pid, tempDir }),
    }).then(() => call.done());
    return;
  }
  if (url.pathname === "/invoke") {
    const call = registry.track(url.searchParams.get("thread") ?? "", url.searchParams.get("call") ?? "", {
      owner: url.searchParams.get("owner") ?? "alice",
    });
    let steps = 0;
    const timer = setInterval(() => {
      steps++;
      if (steps >= 10_000) finish();
    }, 20);
    const finish = () => {
      clearInterval(timer);
      call.signal.removeEventListener("abort", finish);
      call.done();
      json({ aborted: call.signal.aborted, steps });
    };
    if (call.signal.aborted) return finish();
    call.signal.addEventListener("abort", finish);
    return;
  }
  response.writeHead(404).end();
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close();
  void bus.close().finally(() => process.exit(0));
});
