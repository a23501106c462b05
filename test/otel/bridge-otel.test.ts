import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { exportTimeoutMs } from "../../src/otel/otlp.js";
import { otelRequested } from "../../src/otel/requested.js";
import { parseBridgeArgs } from "../../src/bridge/bridge-options.js";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { cooperativeClient, openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { otlpReceiver, type ReceivedSpan } from "../../examples/otel/otlp-receiver.js";

const { methods } = acp;
const EDITOR_TRACE = "0af7651916cd43dd8448eb211c80319c";
const EDITOR_SPAN = "b7ad6b7169203331";

describe("bridge --otel: a real bridge process exports the cascade over OTLP/HTTP", () => {
  it("the editor's Stop is one trace: the prompt joins the editor's span, the agent's nested requests are its children, each with its cancel", async () => {
    const receiver = await otlpReceiver();
    try {
      const bridge = spawnBridge(["--otel"], "sdk-agent", [], {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" },
      });
      const editor = cooperativeClient("editor");
      const stream = acp.ndJsonStream(bridge.output, bridge.input);
      await editor.connectWith(stream, async (agent) => {
        const sessionId = await openSession(agent);
        const prompt = agent.request(methods.agent.session.prompt, {
          ...textPrompt(sessionId, "nested"),
          _meta: { traceparent: `00-${EDITOR_TRACE}-${EDITOR_SPAN}-01` },
        });
        await eventually(
          () => (bridge.hop("agent->bridge").filter((m) => "method" in m && "id" in m).length >= 2 ? true : undefined),
          "both nested requests",
        );
        await agent.notify(methods.agent.session.cancel, { sessionId });
        assert.deepEqual(await prompt, { stopReason: "cancelled" });
      });
      const exit = await closeBridge(bridge);
      assert.equal(exit.code, 0, bridge.stderr());

      const inTrace = (name: string) =>
        eventually(() => receiver.spans.find((s) => s.name === name && s.traceId === EDITOR_TRACE), `span ${name}`);
      const promptSpan: ReceivedSpan = await inTrace("session/prompt");
      const permission = await inTrace("session/request_permission");
      const read = await inTrace("fs/read_text_file");
      assert.equal(promptSpan.service, "acp-cancel-bridge");
      assert.equal(promptSpan.parentSpanId, EDITOR_SPAN, "joined the editor's trace");
      for (const child of [permission, read]) assert.equal(child.parentSpanId, promptSpan.spanId, child.name);
      for (const span of [promptSpan, permission, read]) {
        const cancel = span.events.find((e) => e.name === "cancel");
        assert.equal(cancel?.attributes["acp_cancel.cancel.cause"], "session", span.name);
        assert.equal(span.status.code, 2, `${span.name}: status ERROR`);
      }
      // Requests the editor sent without context (initialize, session/new) each start a trace of their own.
      // An earlier export than the prompt's, in principle: waited for all the same.
      const setup = await eventually(() => receiver.spans.find((s) => s.name === "session/new"), "span session/new");
      assert.notEqual(setup.traceId, EDITOR_TRACE);
      assert.equal(setup.parentSpanId, undefined);
    } finally {
      await receiver.close();
    }
  });

  it("the export timeout, which bounds the last flush at exit (bridge-otel-exit.test.ts): OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, then OTEL_EXPORTER_OTLP_TIMEOUT, else 1 s", () => {
    assert.equal(exportTimeoutMs({}), 1000);
    assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "300" }), 300);
    assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "300", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "50" }), 50);
    assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "soon" }), 1000);
    assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "-5" }), 1000);
  });

  it("--otel is a flag; the standard variables ask for tracing too, and OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none turn them off", () => {
    assert.equal(parseBridgeArgs(["--otel", "--", "agent"]).otel, true);
    assert.equal(parseBridgeArgs(["--", "agent"]).otel, undefined);
    assert.equal(otelRequested(false, {}), false);
    assert.equal(otelRequested(true, { OTEL_SDK_DISABLED: "true" }), true, "the flag is explicit");
    assert.equal(otelRequested(false, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }), true);
    assert.equal(otelRequested(false, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" }), true);
    assert.equal(otelRequested(false, { OTEL_TRACES_EXPORTER: "otlp" }), true);
    assert.equal(otelRequested(false, { OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://x" }), false);
    assert.equal(otelRequested(false, { OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://x" }), false);
  });
});
