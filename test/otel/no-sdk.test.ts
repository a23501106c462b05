import assert from "node:assert/strict";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { CancelEngine } from "../../src/index.js";
import { jobObserver } from "../../src/core/index.js";
import { traceJobs } from "../../src/otel/index.js";

const prompt = (id: number) => ({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: "s", prompt: [] } });

describe("OpenTelemetry: without an SDK registered, tracing installs nothing", () => {
  afterEach(() => trace.disable());

  it("traceJobs() with no SDK leaves the seam unset; with one registered globally it records, and stops when the SDK goes", async () => {
    const stopNothing = traceJobs();
    assert.equal(jobObserver, undefined, "no SDK: nothing installed");
    stopNothing();

    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    assert.equal(trace.setGlobalTracerProvider(provider), true);
    const stop = traceJobs();
    try {
      assert.notEqual(jobObserver, undefined);
      const engine = new CancelEngine(() => {}, { agent: { inProcess: true } });
      engine.receive("client", prompt(1));
      engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
      assert.deepEqual(exporter.getFinishedSpans().map((s) => s.name), ["session/prompt"]);
      trace.disable(); // the SDK is gone: no more spans, though the observer is still installed
      engine.receive("client", prompt(2));
      engine.receive("agent", { jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" } });
      assert.equal(exporter.getFinishedSpans().length, 1);
    } finally {
      stop();
      await provider.shutdown();
    }
    assert.equal(jobObserver, undefined);
  });
});
