import assert from "node:assert/strict";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CancelEngine } from "../../src/index.js";
import { JobCancelledError } from "../../src/core/index.js";
import { cancellableMcpClient, jobOf, scopeMcpHandlers } from "../../src/mcp/index.js";
import { eventually } from "../support/wire-assertions.js";
import { eventsOf, parentOf, traced } from "./tracing-harness.js";

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });

/** A real MCP SDK server (handlers scoped as jobs) and client (our binding), linked in memory. */
async function mcpPair() {
  const server = new McpServer({ name: "tools", version: "1.0.0" });
  const scope = scopeMcpHandlers(server);
  const seenMeta: unknown[] = [];
  let started = false;
  server.registerTool("wait", {}, async (extra) => {
    started = true;
    seenMeta.push((extra as { _meta?: unknown })._meta);
    await untilAborted(jobOf(extra)?.signal ?? extra.signal);
    return { content: [{ type: "text" as const, text: "stopped" }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "agent", version: "1.0.0" });
  const mcp = cancellableMcpClient(client);
  await mcp.connect(clientSide);
  return { server, scope, mcp, client, seenMeta, started: () => started };
}

describe("OpenTelemetry: an MCP tool call under an ACP turn (real MCP SDK client and server, in-memory exporter)", () => {
  let otel: ReturnType<typeof traced>;
  beforeEach(() => {
    otel = traced();
  });
  afterEach(async () => {
    await otel.stop();
  });

  it("the client's call is a child of the turn, the server's handling joins it through params._meta, and both record the cancel with its cause", async () => {
    const pair = await mcpPair();
    const engine = new CancelEngine(() => {}, { agent: { inProcess: true } });
    engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
    const turn = engine.job("client", 1);
    assert.ok(turn);
    const call = pair.mcp.callTool({ name: "wait", arguments: {} }, { parent: turn });
    await eventually(() => (pair.started() ? true : undefined), "the tool running");
    engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    await assert.rejects(call, JobCancelledError);
    await eventually(() => (pair.scope.inFlight === 0 ? true : undefined), "the server's handler done");
    engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
    await pair.client.close();

    const prompt = otel.named("session/prompt");
    const tools = otel.spans().filter((s) => s.name === "tools/call wait");
    const byKind = (kind: SpanKind) => tools.find((s) => s.kind === kind) as ReadableSpan;
    const client = byKind(SpanKind.CLIENT);
    const server = byKind(SpanKind.SERVER);
    assert.equal(tools.length, 2);
    assert.equal(parentOf(client), prompt.spanContext().spanId);
    assert.equal(parentOf(server), client.spanContext().spanId, "joined through params._meta.traceparent");
    for (const span of [client, server]) assert.equal(span.spanContext().traceId, prompt.spanContext().traceId);
    const meta = pair.seenMeta[0] as Record<string, unknown>;
    assert.match(String(meta.traceparent), new RegExp(`^00-${prompt.spanContext().traceId}-${client.spanContext().spanId}-01$`));

    assert.deepEqual(eventsOf(client)[0], {
      name: "cancel",
      attributes: { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" },
    });
    assert.deepEqual(eventsOf(server)[0], {
      name: "cancel",
      attributes: { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" },
    });
    assert.equal(client.status.code, SpanStatusCode.ERROR);
    assert.equal(server.status.message, "cancelled (external)");
    assert.equal(server.attributes["mcp.method.name"], "tools/call");
    assert.equal(server.attributes["gen_ai.tool.name"], "wait");
    assert.equal(typeof server.attributes["jsonrpc.request.id"], "string");
    assert.equal(pair.mcp.inFlight, 0);
  });
});
