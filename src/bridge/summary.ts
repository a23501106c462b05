import type { CancelEngine } from "../acp/index.js";

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** One paragraph for the debug log on exit: what passed through and how fast cancels ended. */
export function summarise(engine: CancelEngine, emulations: number): string {
  const { requests, cancels, answeredForPeer, cancelledAtBirth, lateRepliesDropped } = engine.stats;
  const latencies = [...engine.cancelLatencies].sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  return [
    `summary: ${requests} requests, ${cancels} cancelled, ${answeredForPeer} answered by the bridge,`,
    `${cancelledAtBirth} cancelled at birth, ${lateRepliesDropped} late replies dropped, ${emulations} emulations;`,
    latencies.length === 0
      ? "no cancel latencies"
      : `cancel latency p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}, max ${ms(latencies.at(-1) ?? 0)}`,
    afterAnswers(engine),
  ].join(" ");
}

/** The turns that outlived the bridge's answer (nothing when every agent honoured its cancels). */
function afterAnswers(engine: CancelEngine): string {
  const { turnsTracked, lateUpdatesSuppressed, lateRequestsRefused, promptsHeld, stuckEscalations } =
    engine.aftermathStats;
  if (turnsTracked === 0) return "";
  return (
    `; turns that outlived the bridge's answer: ${turnsTracked}, ${lateUpdatesSuppressed} late updates suppressed, ` +
    `${lateRequestsRefused} late requests refused, ${promptsHeld} prompts held, ${stuckEscalations} stuck escalations`
  );
}
