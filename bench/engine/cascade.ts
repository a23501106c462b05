/**
 * The engine's own share of a cascade, in process: the engine placed as in an embedded agent
 * (the agent app in process, a client known to honour `$/cancel_request`). A turn with N
 * nested requests is cancelled by `session/cancel`; the client answers each nested request
 * -32800 and the agent answers the prompt. Message objects are built before the clock starts.
 */
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import type { JsonRpcMessage } from "../../src/wire/index.js";
import { median } from "../lib/stats.js";
import { error, freshIds, notification, request, result } from "./messages.js";
import { settle } from "./time-pairs.js";

export interface CascadeCost {
  n: number;
  /** session/cancel in → all N `$/cancel_request` out (ms). */
  fanOutMs: number;
  /** session/cancel in → prompt answered, including the N answers going through (ms). */
  totalMs: number;
}

interface Counter {
  cancels: number;
  /** The last response delivered to the client, checked after the clock stops. */
  promptAnswer: JsonRpcMessage | undefined;
}

function once(engine: CancelEngine, counter: Counter, n: number) {
  const first = freshIds(n + 1);
  const sessionId = `s${first}`;
  const prompt = request(first, "session/prompt", { sessionId, prompt: [] });
  const nested = Array.from({ length: n }, (_, i) => request(first + 1 + i, "bench/nested", { sessionId }));
  const answers = Array.from({ length: n }, (_, i) => error(first + 1 + i, -32800, "Request cancelled"));
  const cancel = notification("session/cancel", { sessionId });
  const promptAnswer = result(first, { stopReason: "end_turn" });
  engine.receive("client", prompt);
  for (const m of nested) engine.receive("agent", m);
  counter.cancels = 0;
  counter.promptAnswer = undefined;
  settle();
  const t0 = process.hrtime.bigint();
  engine.receive("client", cancel);
  const t1 = process.hrtime.bigint();
  for (const m of answers) engine.receive("client", m);
  engine.receive("agent", promptAnswer);
  const t2 = process.hrtime.bigint();
  const answer = counter.promptAnswer as { id?: unknown; result?: { stopReason?: unknown } } | undefined;
  if (counter.cancels !== n || answer?.id !== first || answer.result?.stopReason !== "cancelled") {
    throw new Error(`engine cascade of ${n} went wrong`);
  }
  return { fanOutMs: Number(t1 - t0) / 1e6, totalMs: Number(t2 - t0) / 1e6 };
}

export function cascadeCost(sizes: number[], rounds: number): CascadeCost[] {
  const counter: Counter = { cancels: 0, promptAnswer: undefined };
  // Only what the client gets is looked at, and only as much as counting needs: the prompt's
  // answer is checked after the clock stops. (Reading its `result.stopReason` here, on the
  // one message of its kind per cascade, made V8 deoptimise this callback, and the engine's
  // `send` that inlines it, again and again: the probe's cost, not the engine's.)
  const deliver = (side: Side, message: JsonRpcMessage) => {
    if (side !== "client") return;
    if ((message as { method?: unknown }).method === "$/cancel_request") counter.cancels++;
    else counter.promptAnswer = message;
  };
  const engine = new CancelEngine(deliver, { agent: { inProcess: true }, client: { cancelSupport: "yes" } });
  for (const n of sizes) once(engine, counter, n); // warm-up
  const samples = sizes.map(() => [] as { fanOutMs: number; totalMs: number }[]);
  for (let r = 0; r < rounds; r++) {
    sizes.forEach((n, i) => {
      samples[i]?.push(once(engine, counter, n));
    });
  }
  return sizes.map((n, i) => ({
    n,
    fanOutMs: median(samples[i]?.map((s) => s.fanOutMs) ?? []),
    totalMs: median(samples[i]?.map((s) => s.totalMs) ?? []),
  }));
}
