/**
 * Bytes retained per in-flight request, in a process of its own (run with --expose-gc):
 * heap after GC with N in flight, minus the baseline, over N; then the heap once all N
 * are answered, which should be back at the baseline (the baseline is taken after a
 * warm-up cycle of the same size), and what a second cycle adds on top of that: the
 * bytes each request leaves behind. Prints one JSON object.
 *
 *   node --expose-gc memory-probe.js engine|sdk|embedded-sdk|vscode N
 */
import { getHeapSpaceStatistics } from "node:v8";
import { engineSubject } from "../memory/engine-subject.js";
import { sdkSubject } from "../memory/sdk-subject.js";
import type { MemorySubject } from "../memory/subject.js";
import { tick } from "../memory/subject.js";
import { vscodeSubject } from "../memory/vscode-subject.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

/**
 * Bytes of live objects after full GCs. Code spaces are left out: compiled code comes and
 * goes with the optimiser, by a hundred KB or more, whatever the number of requests.
 */
async function heap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc?.();
    await tick();
  }
  return getHeapSpaceStatistics()
    .filter((space) => !space.space_name.startsWith("code") && space.space_name !== "read_only_space")
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

const makers: Record<string, () => MemorySubject> = {
  "engine": engineSubject,
  "sdk": () => sdkSubject(false),
  "embedded-sdk": () => sdkSubject(true),
  "vscode": vscodeSubject,
};
const name = process.argv[2] ?? "";
const n = Number(process.argv[3] ?? 10_000);
const make = makers[name];
if (make === undefined) throw new Error(`unknown subject ${name}`);
const subject = make();
// Warm-up, including one cycle at full size: code is compiled and one-off structures exist
// before the baseline, so what is left after quiescence is what the N requests left behind.
for (const size of [1000, 1000, n]) {
  await subject.load(size);
  await subject.drain();
}
const baseline = await heap();
await subject.load(n);
const loaded = await heap();
await subject.drain();
const quiescent = await heap();
// A second cycle: whatever grows from one quiescent point to the next was left behind per
// request; one-off costs (code, inline caches) cancel out.
await subject.load(n);
await subject.drain();
const quiescentAgain = await heap();
process.stdout.write(
  `${JSON.stringify({
    subject: name,
    n,
    baseline,
    loaded,
    quiescent,
    quiescentAgain,
    perJob: (loaded - baseline) / n,
    residual: quiescent - baseline,
    leakPerJob: (quiescentAgain - quiescent) / n,
  })}\n`,
);
process.exit(0);
