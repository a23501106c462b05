import assert from "node:assert/strict";
import { propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { CancelEngine } from "../../src/index.js";
import { jobObserver } from "../../src/core/index.js";
import { traceContext, traceJobs } from "../../src/otel/index.js";
import { CallRegistry } from "../../src/rap/index.js";
import { parentOf } from "./tracing-harness.js";

/** One service's provider and what it exported. */
function service() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer("acp-cancel-test"), names: () => exporter.getFinishedSpans().map((s) => s.name) };
}

describe("OpenTelemetry: traceJobs({ tracerFor }) for a process hosting several services", () => {
  beforeEach(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
  afterEach(() => {
    propagation.disable();
    trace.disable();
  });

  it("each job's span goes to its service's tracer, and a context from one service's span parents the other's", async () => {
    const agent = service();
    const tools = service();
    const stop = traceJobs({ tracer: agent.tracer, tracerFor: ({ protocol, kind }) => (protocol === "rap" && kind === "server" ? tools.tracer : undefined) });
    try {
      const engine = new CancelEngine(() => {}, { agent: { inProcess: true } });
      engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
      const turn = engine.job("client", 1);
      assert.ok(turn);
      const registry = new CallRegistry();
      const call = registry.track("thread", "call-1", { traceHeaders: traceContext(turn) });
      engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
      engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
      registry.cancel("thread", "call-1");
      call.done();

      assert.deepEqual(agent.names(), ["session/prompt"]);
      assert.deepEqual(tools.names(), ["tool_call"]);
      const [prompt] = agent.exporter.getFinishedSpans();
      const [served] = tools.exporter.getFinishedSpans();
      assert.ok(prompt !== undefined && served !== undefined);
      assert.equal(parentOf(served), prompt.spanContext().spanId, "joined across the two services");
      assert.equal(served.spanContext().traceId, prompt.spanContext().traceId);
    } finally {
      stop();
      await Promise.all([agent.provider.shutdown(), tools.provider.shutdown()]);
    }
    assert.equal(jobObserver, undefined);
  });

  it("with tracerFor alone and no SDK registered, the observer is installed and only the jobs it routes are spans", async () => {
    const tools = service();
    const stop = traceJobs({ tracerFor: ({ protocol }) => (protocol === "rap" ? tools.tracer : undefined) });
    try {
      assert.notEqual(jobObserver, undefined);
      const engine = new CancelEngine(() => {}, { agent: { inProcess: true } });
      engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
      engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
      new CallRegistry().track("thread", "call-2").done();
      assert.deepEqual(tools.names(), ["tool_call"]);
    } finally {
      stop();
      await tools.provider.shutdown();
    }
  });
});
