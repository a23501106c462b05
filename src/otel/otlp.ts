import { TRACER_NAME, traceJobs } from "./index.js";

export interface OtlpTracing {
  /** Stops tracing and flushes the spans still queued. */
  shutdown(): Promise<void>;
}

/**
 * Registers a Node tracer provider exporting over OTLP/HTTP (standard `OTEL_*` variables) and turns jobs into spans.
 * Rejects with Node's own error (naming the package) when the OpenTelemetry SDK or exporter is not installed.
 */
export async function startOtlpTracing(serviceName: string): Promise<OtlpTracing> {
  const [node, otlp, resources] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const resource = resources
    .resourceFromAttributes({ "service.name": serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new node.NodeTracerProvider({
    resource,
    spanProcessors: [new node.BatchSpanProcessor(new otlp.OTLPTraceExporter({ timeoutMillis: exportTimeoutMs(process.env) }))],
  });
  provider.register();
  const untrace = traceJobs({ tracer: provider.getTracer(TRACER_NAME) });
  return {
    shutdown: async () => {
      untrace();
      await provider.shutdown();
    },
  };
}

/**
 * `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, then `OTEL_EXPORTER_OTLP_TIMEOUT` (ms), else 1 s, not the spec's 10 s: a collector that
 * refuses or never answers would hold the process's exit that long.
 */
export function exportTimeoutMs(env: NodeJS.ProcessEnv): number {
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
    const value = Number(env[name]?.trim() || Number.NaN);
    if (Number.isFinite(value) && value > 0) return value;
  }
  return 1000;
}
