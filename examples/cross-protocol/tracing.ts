/**
 * Tracing in the demo's own process, which plays three parties: the editor, the RAP tool
 * server and the A2A agent. Each is a service of its own (its own resource), so this process
 * has one tracer provider per party; `traceJobs({ tracerFor })` gives each job its party's
 * tracer by protocol. The editor is a plain ACP SDK client: its turn span is made here with the
 * OpenTelemetry API, and its context goes into the prompt's `params._meta`, so the agent joins
 * the editor's trace. Everything is exported over OTLP/HTTP to `endpoint`.
 */
import { propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { TRACER_NAME, traceJobs } from "../../src/otel/index.js";

export interface EditorTurn {
  /** The turn's W3C context, for the prompt's `params._meta`. */
  readonly meta: Record<string, string>;
  /** The editor pressed Stop. */
  stop(): void;
  /** The prompt was answered. */
  end(answer: unknown): void;
}

export interface DemoTracing {
  editorTurn(): EditorTurn;
  /** Flushes every party's spans and uninstalls what was installed. */
  shutdown(): Promise<void>;
}

export function startDemoTracing(endpoint: string): DemoTracing {
  const provider = (service: string) =>
    new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": service }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), { scheduledDelayMillis: 50 })],
    });
  const parties = { editor: provider("editor"), rap: provider("rap-tool-server"), a2a: provider("a2a-agent") };
  const tracers = { rap: parties.rap.getTracer(TRACER_NAME), a2a: parties.a2a.getTracer(TRACER_NAME) };
  const propagators = [new W3CTraceContextPropagator(), new W3CBaggagePropagator()];
  propagation.setGlobalPropagator(new CompositePropagator({ propagators }));
  // Only the tool server's and the A2A agent's jobs are in this process; nothing else is traced.
  const untrace = traceJobs({ tracerFor: ({ protocol }) => (protocol === "rap" || protocol === "a2a" ? tracers[protocol] : undefined) });
  const editor = parties.editor.getTracer("editor");
  return {
    editorTurn: () => {
      const span: Span = editor.startSpan("session/prompt", {
        kind: SpanKind.CLIENT,
        attributes: { "acp_cancel.protocol": "acp", "rpc.system.name": "jsonrpc", "rpc.method": "session/prompt" },
      });
      const meta: Record<string, string> = {};
      propagation.inject(trace.setSpan(ROOT_CONTEXT, span), meta);
      return {
        meta,
        stop: () => span.addEvent("Stop pressed (session/cancel sent)"),
        end: (answer) => {
          const stopReason = (answer as { stopReason?: unknown } | undefined)?.stopReason;
          span.setAttribute("acp.stop_reason", String(stopReason));
          if (stopReason !== "cancelled" && stopReason !== "end_turn") span.setStatus({ code: SpanStatusCode.ERROR, message: JSON.stringify(answer) });
          span.end();
        },
      };
    },
    shutdown: async () => {
      untrace();
      await Promise.all(Object.values(parties).map((party) => party.shutdown()));
      propagation.disable();
    },
  };
}
