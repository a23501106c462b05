import assert from "node:assert/strict";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import sinon from "sinon";
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import { Calls } from "../../src/core/call.js";
import type { JobInfo } from "../../src/core/index.js";
import type { JsonRpcMessage, JsonRpcRequest } from "../../src/wire/index.js";
import { schemaProblem } from "../support/schema-validator.js";
import { eventsOf, parentOf, traced } from "./tracing-harness.js";

const EDITOR_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const EDITOR_SPAN = "00f067aa0ba902b7";

/** The engine of an embedded agent (the agent side in process), a client that honours $/cancel_request. */
function embeddedAgent(graceMs: number) {
  const log: { to: Side; message: JsonRpcMessage }[] = [];
  const engine = new CancelEngine((to, message) => log.push({ to, message }), {
    graceMs,
    agent: { inProcess: true },
    client: { cancelSupport: "yes" },
  });
  const sentTo = (side: Side, id: number) =>
    log.find((d) => d.to === side && "method" in d.message && "id" in d.message && d.message.id === id)?.message as
    | JsonRpcRequest
    | undefined;
  return { engine, log, sentTo };
}

describe("OpenTelemetry: a cancelled ACP turn as spans (in-memory exporter)", () => {
  let clock: sinon.SinonFakeTimers;
  let otel: ReturnType<typeof traced>;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    otel = traced();
  });
  afterEach(async () => {
    clock.restore();
    await otel.stop();
  });

  it("the turn is a span joined to the editor's trace, its nested requests and a tool call are children, and every cancel is an event with its cause", () => {
    const { engine, log, sentTo } = embeddedAgent(500);
    engine.receive("client", {
      jsonrpc: "2.0",
      id: 1,
      method: "session/prompt",
      params: {
        sessionId: "s1",
        prompt: [{ type: "text", text: "go" }],
        _meta: { traceparent: `00-${EDITOR_TRACE}-${EDITOR_SPAN}-01` },
      },
    });
    const turn = engine.job("client", 1);
    assert.ok(turn);
    // The agent's handler asks the client twice (nested under the turn by session)...
    engine.receive("agent", { jsonrpc: "2.0", id: 7, method: "fs/read_text_file", params: { sessionId: "s1", path: "/a" } });
    engine.receive("agent", {
      jsonrpc: "2.0",
      id: 8,
      method: "session/request_permission",
      params: {
        sessionId: "s1",
        toolCall: { toolCallId: "t1" },
        options: [{ optionId: "ok", name: "OK", kind: "allow_once" }],
      },
    });
    // ...and calls a tool of another binding under the turn (through the one call lifecycle).
    const tools = new Calls<string, string>({ graceMs: 500 });
    const describe = (): JobInfo => ({
      protocol: "mcp",
      method: "tools/call",
      id: 3,
      kind: "client",
      attributes: { "gen_ai.tool.name": "search" },
    });
    const tool = tools.start("search", { parent: turn }, { describe, graceEnded: (call: { resolve(v: string): boolean }) => call.resolve("cancelled") });
    assert.ok(tool);

    engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s1" } });
    engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }); // held for children
    clock.tick(500); // the grace passes: synthetic answers for fs/read_text_file and the tool call
    engine.receive("client", { jsonrpc: "2.0", id: 7, result: { content: "late" } }); // dropped
    assert.equal(tool.resolve("late"), false);
    assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
    assert.equal(tools.size, 0);

    const prompt = otel.named("session/prompt");
    const read = otel.named("fs/read_text_file");
    const permission = otel.named("session/request_permission");
    const search = otel.named("tools/call search");
    // One trace, the editor's; the turn's parent is the editor's span.
    for (const span of otel.spans()) assert.equal(span.spanContext().traceId, EDITOR_TRACE, span.name);
    assert.equal(parentOf(prompt), EDITOR_SPAN);
    assert.equal(prompt.kind, SpanKind.SERVER, "the embedded agent handles the prompt");
    for (const child of [read, permission, search]) assert.equal(parentOf(child), prompt.spanContext().spanId, child.name);
    assert.equal(read.kind, SpanKind.CLIENT);

    assert.deepEqual(eventsOf(prompt).map((e) => e.name), ["cancel", "grace"]);
    assert.deepEqual(eventsOf(prompt)[0]?.attributes, { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "self" });
    assert.deepEqual(eventsOf(read), [
      { name: "cancel", attributes: { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" } },
      { name: "grace", attributes: {} },
      { name: "synthetic answer", attributes: {} },
    ]);
    assert.deepEqual(eventsOf(search).map((e) => e.name), ["cancel", "grace", "synthetic answer"]);
    assert.deepEqual(eventsOf(permission).map((e) => e.name), ["cancel", "synthetic answer"]);

    // A late reply comes after its span ended: a moment-long child span says it was dropped.
    const late = otel.spans().filter((s) => s.name === "late reply dropped");
    assert.deepEqual(late.map(parentOf).sort(), [read.spanContext().spanId, search.spanContext().spanId].sort());

    for (const span of [prompt, read, permission, search]) {
      assert.equal(span.status.code, SpanStatusCode.ERROR, span.name);
      assert.equal(span.status.message, "cancelled (session)");
      assert.equal(span.attributes["acp_cancel.cancel.cause"], "session");
    }
    assert.deepEqual(
      { ...prompt.attributes },
      {
        "acp_cancel.protocol": "acp",
        "rpc.system.name": "jsonrpc",
        "rpc.system": "jsonrpc",
        "rpc.method": "session/prompt",
        "jsonrpc.protocol.version": "2.0",
        "jsonrpc.request.id": "1",
        "rpc.jsonrpc.request_id": "1",
        "acp.session.id": "s1",
        "acp_cancel.state": "cancelled",
        "acp_cancel.cancel.cause": "session",
        "error.type": "cancelled",
      },
    );
    assert.equal(search.attributes["mcp.method.name"], "tools/call");
    assert.equal(search.attributes["gen_ai.tool.name"], "search");

    // Each request the engine forwards carries its own span's context in params._meta, and
    // still validates against the ACP schema.
    for (const [side, id, span] of [["agent", 1, prompt], ["client", 7, read], ["client", 8, permission]] as const) {
      const forwarded = sentTo(side, id);
      assert.ok(forwarded);
      const meta = (forwarded.params as { _meta: Record<string, unknown> })._meta;
      assert.equal(meta.traceparent, `00-${EDITOR_TRACE}-${span.spanContext().spanId}-01`);
      assert.equal(schemaProblem(1, forwarded as unknown as Parameters<typeof schemaProblem>[1]), undefined);
    }
    assert.equal(log.filter((d) => d.to === "client" && "id" in d.message && d.message.id === 1).length, 1);
  });

  it("a turn that ends normally is one span with no events and an unset status; an error answer sets the error status", () => {
    const { engine } = embeddedAgent(500);
    engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
    engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } });
    engine.receive("client", { jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId: "x", cwd: "/", mcpServers: [] } });
    engine.receive("agent", { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "no such session" } });
    const prompt = otel.named("session/prompt");
    assert.equal(parentOf(prompt), undefined, "no editor context: a new trace");
    assert.deepEqual(prompt.events, []);
    assert.equal(prompt.status.code, SpanStatusCode.UNSET);
    const load = otel.named("session/load");
    assert.equal(load.status.code, SpanStatusCode.ERROR);
    assert.equal(load.status.message, "no such session");
    assert.equal(load.attributes["error.type"], "-32602");
    assert.notEqual(load.spanContext().traceId, prompt.spanContext().traceId);
  });

  it("without an observer nothing is added to the messages", async () => {
    await otel.stop();
    const { engine, sentTo } = embeddedAgent(500);
    const params = { sessionId: "s", prompt: [] };
    engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params });
    assert.equal(sentTo("agent", 1)?.params, params, "forwarded untouched, the same object");
    otel = traced(); // for afterEach
  });
});
