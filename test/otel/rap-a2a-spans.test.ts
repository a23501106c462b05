import assert from "node:assert/strict";
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { CancelEngine } from "../../src/index.js";
import { A2aTaskLinks } from "../../src/a2a/index.js";
import { CallRegistry, createNodeCancelHandler, RapRuntime, type TrackedCall } from "../../src/rap/index.js";
import { traceContext } from "../../src/otel/index.js";
import { bodyOf, listen } from "../rap/http-support.js";
import type { CallInterceptor } from "@a2a-js/sdk/client";
import { textTaskRequest } from "../../examples/cross-protocol/a2a-request.js";
import { sdkClient } from "../a2a/a2a-clients.js";
import { startA2aServer } from "../a2a/a2a-server.js";
import { eventually } from "../support/wire-assertions.js";
import { eventsOf, parentOf, traced } from "./tracing-harness.js";

/** A traced ACP turn of an embedded agent, to hang other protocols' calls under. */
function tracedTurn() {
  const engine = new CancelEngine(() => {}, { agent: { inProcess: true } });
  engine.receive("client", { jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
  const turn = engine.job("client", 1);
  assert.ok(turn);
  const stop = () => {
    engine.receive("client", { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
    engine.receive("agent", { jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } });
  };
  return { engine, turn, stop };
}

const spanOfKind = (spans: ReadableSpan[], name: string, kind: SpanKind) =>
  spans.find((s) => s.name === name && s.kind === kind) as ReadableSpan;

describe("OpenTelemetry: RAP and A2A carry the trace in HTTP headers (in-memory exporter)", () => {
  let otel: ReturnType<typeof traced>;
  beforeEach(() => {
    otel = traced();
  });
  afterEach(async () => {
    await otel.stop();
  });

  it("RAP: the invocation and the cancel notice carry the runtime call's traceparent; the tool server's call joins it and records the notice's cancel", async () => {
    const registry = new CallRegistry();
    const cancelHandler = createNodeCancelHandler({ registry, authenticate: () => true });
    const noticeHeaders: Record<string, unknown>[] = [];
    let tracked: TrackedCall | undefined;
    const tools = await listen(async (request, response) => {
      if (request.url === "/cancel_tool_call") {
        noticeHeaders.push({ ...request.headers });
        cancelHandler(request, response);
        return;
      }
      const invocation = JSON.parse(await bodyOf(request)) as { group_id: string; id: string };
      tracked = registry.track(invocation.group_id, invocation.id, { traceHeaders: request.headers });
      response.writeHead(200).end();
    });
    const runtime = new RapRuntime({ servers: [tools.url] });
    try {
      const { turn, stop } = tracedTurn();
      const call = runtime.invoke(`${tools.url}/invoke`, {
        threadId: "thread",
        toolCallId: "call-1",
        operation: "search",
        arguments: {},
        callbackUrl: "http://127.0.0.1:9/unused",
        parent: turn,
      });
      const serverCall = await eventually(() => tracked, "the tool server tracking the call");
      stop();
      assert.equal((await call.outcome).interrupted, true);
      await runtime.idle();
      await eventually(() => (serverCall.signal.aborted ? true : undefined), "the notice cancelling the tool's call");
      serverCall.done();

      const spans = otel.spans();
      const prompt = otel.named("session/prompt");
      const client = spanOfKind(spans, "tool_call", SpanKind.CLIENT);
      const server = spanOfKind(spans, "tool_call", SpanKind.SERVER);
      assert.equal(parentOf(client), prompt.spanContext().spanId);
      assert.equal(parentOf(server), client.spanContext().spanId, "joined through the invocation's traceparent header");
      assert.equal(server.spanContext().traceId, prompt.spanContext().traceId);
      assert.equal(noticeHeaders[0]?.traceparent, `00-${prompt.spanContext().traceId}-${client.spanContext().spanId}-01`);
      assert.deepEqual(eventsOf(client)[0]?.attributes, { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" });
      assert.deepEqual(eventsOf(server)[0]?.attributes, { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" });
      assert.equal(server.attributes["rap.thread.id"], "thread");
      assert.equal(server.attributes["rap.request.id"], "call-1");
    } finally {
      await tools.close();
    }
  });

  it("A2A (real @a2a-js/sdk client and server): the served task joins the sender's trace by the message's metadata; the linked task's cancel carries its context as HTTP headers", async () => {
    const server = await startA2aServer();
    try {
      const seen: (Record<string, string> | undefined)[] = [];
      const watch: CallInterceptor = {
        before: async (args) => {
          if (args.input?.method === "cancelTask") seen.push(args.options?.serviceParameters);
        },
        after: async () => {},
      };
      const client = await sdkClient(server, "1.0", [watch]);
      const { turn, stop } = tracedTurn();
      const request = textTaskRequest("run 1000000");
      assert.ok(request.message);
      request.message = { ...request.message, metadata: traceContext(turn) };
      const task = await client.sendMessage(request);
      assert.ok("status" in task);
      const links = new A2aTaskLinks({ client, parent: turn });
      links.add(task.id);
      stop();
      await links.idle();
      await eventually(() => (server.executor.running === 0 ? true : undefined), "the task's work returned");

      const prompt = otel.named("session/prompt");
      const linked = spanOfKind(otel.spans(), "task", SpanKind.CLIENT);
      const served = spanOfKind(otel.spans(), "task", SpanKind.SERVER);
      assert.equal(parentOf(linked), prompt.spanContext().spanId);
      assert.equal(parentOf(served), prompt.spanContext().spanId, "joined through the message's metadata");
      assert.equal(served.spanContext().traceId, prompt.spanContext().traceId);
      assert.equal(seen[0]?.traceparent, `00-${prompt.spanContext().traceId}-${linked.spanContext().spanId}-01`);
      assert.deepEqual(eventsOf(linked)[0]?.attributes, { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" });
      assert.deepEqual(eventsOf(served)[0]?.attributes, { "acp_cancel.cancel.cause": "external", "acp_cancel.cancel.origin": "self" });
      assert.equal(linked.attributes["rpc.method"], "task");
    } finally {
      await server.close();
    }
  });
});
