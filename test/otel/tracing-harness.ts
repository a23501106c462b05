import { propagation } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { traceJobs } from "../../src/otel/index.js";

/**
 * The official SDK with its in-memory exporter, as OpenTelemetry's own instrumentations
 * test themselves, and acp-cancel's observer installed on it. `stop` uninstalls both.
 */
export function traced() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const untrace = traceJobs({ tracer: provider.getTracer("acp-cancel-test") });
  return {
    exporter,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    named: (name: string): ReadableSpan => {
      const found = exporter.getFinishedSpans().filter((span) => span.name === name);
      if (found.length !== 1) throw new Error(`expected one span named ${name}, found ${found.length}`);
      return found[0] as ReadableSpan;
    },
    stop: async () => {
      untrace();
      propagation.disable();
      await provider.shutdown();
    },
  };
}

export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

export function eventsOf(span: ReadableSpan): { name: string; attributes: Record<string, unknown> }[] {
  return span.events.map((event) => ({ name: event.name, attributes: { ...event.attributes } }));
}
