/**
 * Bytes retained per RAP call, in a process of its own (run with --expose-gc): heap after
 * GC with N calls tracked (tool server) or dispatched (runtime), minus the baseline, over
 * N; then what is left once every call is done (the remembered window is capped, so this
 * is the bounded memory of finished calls). Prints one JSON object.
 *
 *   node --expose-gc rap-memory-probe.js registry|runtime N
 */
import { getHeapSpaceStatistics } from "node:v8";
import { CallRegistry, RapRuntime, type ToolCall, type TrackedCall } from "../../src/rap/index.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

async function heap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith("code") && space.space_name !== "read_only_space")
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

const kind = process.argv[2] ?? "registry";
const n = Number(process.argv[3] ?? "10000");
const id = (i: number) => `call_${i.toString(36).padStart(12, "0")}`;

async function registryCycle(registry: CallRegistry, offset: number) {
  const calls: TrackedCall[] = [];
  for (let i = 0; i < n; i++) calls.push(registry.track("thread_0123456789", id(offset + i)));
  const loaded = await heap();
  for (const call of calls) call.done();
  return loaded;
}

async function runtimeCycle(runtime: RapRuntime, offset: number) {
  const calls: ToolCall[] = [];
  for (let i = 0; i < n; i++) calls.push(runtime.dispatch({ threadId: "thread_0123456789", toolCallId: id(offset + i) }));
  const loaded = await heap();
  for (const call of calls) runtime.deliver({ type: "tool_result", group_id: "thread_0123456789", id: call.toolCallId, text: "ok" });
  return loaded;
}

// Remember at most n finished calls, so the warm-up fills the window and the next cycle measures steady state.
const registry = new CallRegistry({ rememberMax: n });
const runtime = new RapRuntime({ servers: [], rememberFinished: n });
const cycle = (offset: number) => (kind === "runtime" ? runtimeCycle(runtime, offset) : registryCycle(registry, offset));
await cycle(0); // warm-up: JIT, and the remembered window filled
const baseline = await heap();
const loaded = await cycle(n);
const quiescent = await heap();
const perCall = (loaded - baseline) / n;
process.stdout.write(JSON.stringify({ n, baseline, loaded, quiescent, perCall, residual: quiescent - baseline }));
