import type { CancelEngine } from "../acp/index.js";

/** One paragraph for the debug log on exit: what passed through, how fast cancels ended, what outlived an answer. */
export function summarise(engine: CancelEngine, emulations: number): string {
  const { requests, cancels, answeredForPeer, cancelledAtBirth, lateRepliesDropped } = engine.stats;
  const { turnsTracked, lateUpdatesSuppressed, lateRequestsRefused, promptsHeld, stuckEscalations } = engine.aftermathStats;
  const latencies = [...engine.cancelLatencies].sort((a, b) => a - b);
  const ms = (index: number) => `${(latencies[index] ?? 0).toFixed(1)} ms`;
  const percentile = (p: number) => ms(Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length)));
  return [
    `summary: ${requests} requests, ${cancels} cancelled, ${answeredForPeer} answered by the bridge,`,
    `${cancelledAtBirth} cancelled at birth, ${lateRepliesDropped} late replies dropped, ${emulations} emulations;`,
    latencies.length === 0
      ? "no cancel latencies"
      : `cancel latency p50 ${percentile(50)}, p95 ${percentile(95)}, max ${ms(latencies.length - 1)}`,
    turnsTracked === 0
      ? ""
      : `; turns that outlived the bridge's answer: ${turnsTracked}, ${lateUpdatesSuppressed} late updates suppressed, ` +
        `${lateRequestsRefused} late requests refused, ${promptsHeld} prompts held, ${stuckEscalations} stuck escalations`,
  ].join(" ");
}
