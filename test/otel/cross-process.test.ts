import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { endAndAwaitExit, fixturePath, spawnNode } from "../support/spawn-peer.js";
import { eventually, HANG_LIMIT_MS } from "../support/wire-assertions.js";
import { otlpReceiver, type ReceivedSpan } from "../../examples/otel/otlp-receiver.js";

const { methods } = acp;
const EDITOR_TRACE = "5b8efff798038103d269b633813fc60c";
const EDITOR_SPAN = "eee19b7ec3c1b174";
const SERVER = 2;
const CLIENT = 3; // OTLP's SPAN_KIND_* numbering (INTERNAL 1, SERVER 2, CLIENT 3)

describe("OpenTelemetry across real processes: editor → bridge → ACP agent → MCP server (stdio) and RAP tool server (HTTP)", () => {
  it("one Stop is one trace: every hop's span has the previous hop's span as parent, and each records its cancel with the cause", async () => {
    const receiver = await otlpReceiver();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" };
    const rapServer = spawnNode([fixturePath("otel-rap-server")], env);
    try {
      const rapUrl = await new Promise<string>((resolve) =>
        rapServer.child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())),
      );
      const bridge = spawnBridge([], "otel-cascade-agent", [], { env: { ...env, RAP_TOOL_SERVER: rapUrl } });
      const editor = acp.client({ name: "editor" });
      await editor.connectWith(acp.ndJsonStream(bridge.output, bridge.input), async (agent) => {
        const sessionId = await openSession(agent);
        const prompt = agent.request(methods.agent.session.prompt, {
          ...textPrompt(sessionId, "go"),
          _meta: { traceparent: `00-${EDITOR_TRACE}-${EDITOR_SPAN}-01` },
        });
        await eventually(() => (/otel-mcp-server wait started/.test(bridge.stderr()) ? true : undefined), "the MCP tool running");
        await eventually(() => (/otel-rap-server tracked/.test(rapServer.stderr()) ? true : undefined), "the RAP call tracked");
        await agent.notify(methods.agent.session.cancel, { sessionId });
        assert.deepEqual(await prompt, { stopReason: "cancelled" });
      });
      assert.equal((await closeBridge(bridge)).code, 0, bridge.stderr());

      const find = (service: string, name: string, kind: number) =>
        eventually(
          () => receiver.spans.find((s) => s.service === service && s.name === name && s.kind === kind),
          `${service}: ${name}`,
        );
      const bridgePrompt = await find("acp-cancel-bridge", "session/prompt", CLIENT);
      const agentPrompt = await find("acp-agent", "session/prompt", SERVER);
      const mcpClient = await find("acp-agent", "tools/call wait", CLIENT);
      const mcpServer = await find("mcp-server", "tools/call wait", SERVER);
      const rapClient = await find("acp-agent", "tool_call", CLIENT);
      const rapServerSpan = await find("rap-tool-server", "tool_call", SERVER);
      const cascade: [ReceivedSpan, string][] = [
        [bridgePrompt, EDITOR_SPAN],
        [agentPrompt, bridgePrompt.spanId],
        [mcpClient, agentPrompt.spanId],
        [mcpServer, mcpClient.spanId],
        [rapClient, agentPrompt.spanId],
        [rapServerSpan, rapClient.spanId],
      ];
      for (const [span, parent] of cascade) {
        const where = `${span.service}: ${span.name}`;
        assert.equal(span.traceId, EDITOR_TRACE, `${where}: one trace`);
        assert.equal(span.parentSpanId, parent, `${where}: parent`);
        assert.equal(span.status.code, 2, `${where}: status ERROR`);
      }
      const cause = (span: ReceivedSpan) => span.events.find((e) => e.name === "cancel")?.attributes;
      assert.deepEqual(cause(bridgePrompt), { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "self" });
      assert.deepEqual(cause(agentPrompt), { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "self" });
      assert.deepEqual(cause(mcpClient), { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" });
      assert.deepEqual(cause(rapClient), { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" });
      // Past a protocol boundary the cancel arrives as that protocol's own cancel (notifications/cancelled, a RAP notice).
      assert.deepEqual(cause(mcpServer), { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" });
      assert.deepEqual(cause(rapServerSpan), { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" });
    } finally {
      await endAndAwaitExit(rapServer, HANG_LIMIT_MS);
      await receiver.close();
    }
  });
});
