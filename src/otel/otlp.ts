import { TRACER_NAME, traceJobs } from "./index.js";

/**
 * Exporting this process's jobs as spans over OTLP/HTTP, through the official packages when
 * they are installed (`@opentelemetry/sdk-trace-node`, `@opentelemetry/exporter-trace-otlp-http`).
 * The exporter reads the standard `OTEL_EXPORTER_OTLP_*` variables (endpoint, headers), the
 * resource `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
 */

export interface OtlpTracing {
  /** Stops tracing and flushes the spans still queued. */
  shutdown(): Promise<void>;
}

/**
 * Registers a Node tracer provider (W3C propagators, async context) exporting over OTLP/HTTP,
 * and turns jobs into spans. Rejects with an Error naming the missing package when the
 * OpenTelemetry SDK or exporter is not installed.
 */
export async function startOtlpTracing(serviceName: string): Promise<OtlpTracing> {
  const [node, otlp, resources] = await Promise.all([
    importNamed("@opentelemetry/sdk-trace-node", () => import("@opentelemetry/sdk-trace-node")),
    importNamed("@opentelemetry/exporter-trace-otlp-http", () => import("@opentelemetry/exporter-trace-otlp-http")),
    importNamed("@opentelemetry/resources", () => import("@opentelemetry/resources")),
  ]);
  const resource = resources
    .resourceFromAttributes({ "service.name": serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new node.NodeTracerProvider({
    resource,
    spanProcessors: [new node.BatchSpanProcessor(new otlp.OTLPTraceExporter())],
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

async function importNamed<M>(name: string, load: () => Promise<M>): Promise<M> {
  try {
    return await load();
  } catch (error) {
    throw new Error(`${name} is not installed (npm install ${name})`, { cause: error });
  }
}
