/**
 * A real @agentclientprotocol/sdk 2.4.0 agent for the benchmarks, over stdio.
 *
 *   node sdk-agent.js [--wrapped]
 *
 * --wrapped: `withCancellation(acp.agent(...))`, the one-line adoption of acp-cancel.
 * --inline:  as --wrapped, connected through acp-cancel's `ndJsonStream` (engine inline).
 *
 * Requests (all through `onRequest("*", ...)` except the ACP ones):
 * - `bench/echo`  answers `{}` at once.
 * - `bench/wait`  awaits its signal, then throws (a handler that honours cancellation).
 * - `bench/count` how many `bench/wait` handlers are waiting.
 * - `bench/busy`  how long the main thread has been busy so far, in ms (event-loop utilisation).
 * - `session/prompt` with text `cascade N`: issues N nested `bench/nested` requests to the
 *   client and waits for all of them. Wrapped, it threads no signal (acp-cancel cascades);
 *   bare, it threads a per-session signal by hand and aborts it on `session/cancel`.
 */
import { performance as nodePerformance } from "node:perf_hooks";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { ndJsonStream, withCancellation } from "../../src/index.js";

const inline = process.argv.includes("--inline");
const wrapped = inline || process.argv.includes("--wrapped");
const base = acp.agent({ name: "bench-agent" });
const app = wrapped ? withCancellation(base) : base;

let waiting = 0;
let sessions = 0;
const sessionStops = new Map<string, AbortController>();

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

app
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `session-${++sessions}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const first = params.prompt[0];
    const text = first?.type === "text" ? first.text : "";
    const { sessionId } = params;
    const match = /^cascade (\d+)$/.exec(text);
    if (match === null) return { stopReason: "end_turn" };
    const count = Number(match[1]);
    const stop = new AbortController();
    sessionStops.set(sessionId, stop);
    const options = wrapped ? undefined : { cancellationSignal: stop.signal };
    await Promise.allSettled(
      Array.from({ length: count }, () => client.request("bench/nested", { sessionId }, options)),
    );
    sessionStops.delete(sessionId);
    return { stopReason: stop.signal.aborted ? "cancelled" : "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    // What a bare SDK agent has to write by hand for session/cancel to reach nested requests.
    if (!wrapped) sessionStops.get(params.sessionId)?.abort();
  })
  .onRequest("*", async ({ method, signal }) => {
    if (method === "bench/echo") return {};
    if (method === "bench/count") return { waiting };
    if (method === "bench/busy") return { busyMs: nodePerformance.eventLoopUtilization().active };
    if (method === "bench/wait") {
      waiting++;
      await untilAborted(signal);
      waiting--;
      signal.throwIfAborted();
    }
    throw acp.RequestError.methodNotFound(method);
  });

const connection = app.connect(
  (inline ? ndJsonStream : acp.ndJsonStream)(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
  ),
);
void connection.closed.then(() => process.exit(0));
