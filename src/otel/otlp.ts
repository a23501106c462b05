import { TRACER_NAME, traceJobs } from "./index.js";

export interface OtlpTracing {
  /** Stops tracing and flushes the spans still queued. */
  shutdown(): Promise<void>;
}

/**
 * Registers a Node tracer provider (W3C propagators, async context) exporting over OTLP/HTTP,
 * and turns jobs into spans. The exporter reads the standard `OTEL_EXPORTER_OTLP_*` variables,
 * the resource `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`. Rejects with Node's own error
 * (naming the package) when the OpenTelemetry SDK or exporter is not installed.
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
 * The exporter's own variables, `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` then `OTEL_EXPORTER_OTLP_TIMEOUT`
 * (milliseconds), else 1 s rather than the specification's 10 s: a collector that refuses or never
 * answers would otherwise hold the process's exit that long (the exporter retries until then).
 */
export function exportTimeoutMs(env: NodeJS.ProcessEnv): number {
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
    const value = Number(env[name]?.trim() || Number.NaN);
    if (Number.isFinite(value) && value > 0) return value;
  }
  return 1000;
}
