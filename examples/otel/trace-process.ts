/**
 * For the demo's processes: exports this process's jobs as spans over OTLP/HTTP when the
 * standard variables ask for it (OTEL_EXPORTER_OTLP_ENDPOINT…), through acp-cancel's own
 * exporter setup. Loads OpenTelemetry only then. Returns the function that flushes and stops.
 */
import { otelRequested } from "../../src/otel/requested.js";

export async function traceThisProcess(serviceName: string): Promise<() => Promise<void>> {
  if (!otelRequested(false)) return async () => {};
  const { startOtlpTracing } = await import("../../src/otel/otlp.js");
  const tracing = await startOtlpTracing(serviceName);
  return () => tracing.shutdown();
}

/** The OTEL_* variables of this process, to pass to a child that gets a safe subset of the environment. */
export function otelEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[0].startsWith("OTEL_") && entry[1] !== undefined));
}
