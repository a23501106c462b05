/**
 * The ABP app's spans. The demo page has no OpenTelemetry SDK of its own (a browser SDK needs a
 * bundler, and none installs offline), so it keeps a record of each render it handled, with the
 * trace context the agent sent in the call's `options._meta` (`context.trace` in the handler).
 * The agent's process reads those records from the page and exports them with the official SDK
 * and exporter, as the spans of a service of their own, `abp-app`. The parent of each comes
 * from the context the page received, so the link across the ABP boundary is the page's.
 */
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Page } from "playwright-core";
import { TRACER_NAME } from "../../src/otel/index.js";
import type { HandledCall } from "../abp/demo-app.js";

/** Exports the calls the page handled as `abp-app` spans; resolves once they are sent. */
export async function exportPageSpans(page: Page): Promise<number> {
  type Demo = { demo: { handled: HandledCall[] } };
  const handled = await page.evaluate(() => (globalThis as unknown as Demo).demo.handled);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "abp-app" }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
  });
  const tracer = provider.getTracer(TRACER_NAME);
  for (const call of handled) {
    const parent = propagation.extract(ROOT_CONTEXT, call.trace);
    const attributes = { "acp_cancel.protocol": "abp", "rpc.method": call.capability, "abp.request.id": call.callId };
    const span = tracer.startSpan(call.capability, { kind: SpanKind.SERVER, attributes, startTime: call.start }, parent);
    if (call.abortedAt !== undefined) {
      // capabilities/cancel reached the app: a cancel of its own protocol, so `external` here.
      span.addEvent("cancel", { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" }, call.abortedAt);
      span.setAttributes({ "acp_cancel.state": "cancelled", "acp_cancel.cancel.cause": "external", "error.type": "cancelled" });
      span.setStatus({ code: SpanStatusCode.ERROR, message: `cancelled (external: ${call.reason ?? "?"})` });
    } else if (call.error !== undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: call.error });
    }
    span.end(call.end ?? Date.now());
  }
  await provider.shutdown();
  return handled.length;
}
