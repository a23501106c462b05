import assert from "node:assert/strict";
import { Job } from "../../src/core/index.js";
import { invocationSchema, RapRuntime, type RapRuntimeEvent } from "../../src/rap/index.js";
import { INTERRUPTED_TEXT, toolResultSchema } from "../../src/rap/messages.js";
import { type Listening, recordingServer } from "./http-support.js";

describe("RAP runtime: tool calls as jobs keyed by (thread_id, tool_call_id)", () => {
  const open: Listening[] = [];
  afterEach(async () => Promise.all(open.splice(0).map((s) => s.close())));

  async function runtimeWithServer() {
    const server = await recordingServer((_a, response) => response.end());
    open.push(server);
    const events: RapRuntimeEvent[] = [];
    const runtime = new RapRuntime({ servers: [server.url], onEvent: (e) => events.push(e) });
    return { server, events, runtime };
  }

  it("a cancelled call gets a synthetic, schema-valid 'interrupted' result; a later real result is accepted and ignored", async () => {
    const { runtime, events, server } = await runtimeWithServer();
    const call = runtime.dispatch({ threadId: "t", toolCallId: "c1", callId: "llm-call-1" });
    assert.equal(runtime.cancel("t", "c1"), "cancelled");
    const outcome = await call.outcome;
    assert.deepEqual(outcome, {
      result: { type: "tool_result", group_id: "t", id: "c1", call_id: "llm-call-1", text: INTERRUPTED_TEXT },
      interrupted: true,
      reason: "external",
    });
    assert.ok(toolResultSchema.safeParse(outcome.result).success);
    assert.equal(runtime.cancel("t", "c1"), "already-settled", "a second cancel sends nothing more");
    assert.equal(runtime.deliver({ type: "tool_result", group_id: "t", id: "c1", text: "the real answer" }), "late-ignored");
    assert.equal(runtime.deliver({ type: "tool_result", group_id: "t", id: "never", text: "?" }), "unknown");
    await runtime.idle();
    assert.equal(server.arrivals.length, 1);
    assert.deepEqual(
      events.filter((e) => e.type !== "cancel-notice"),
      [
        { type: "call-interrupted", threadId: "t", toolCallId: "c1", reason: "external" },
        { type: "late-result", threadId: "t", toolCallId: "c1", ignored: true },
        { type: "unknown-result", threadId: "t", toolCallId: "never" },
      ],
    );
    assert.equal(runtime.size, 0);
  });

  it("cancelling a parent job of another binding cancels its calls, deepest first, and the parent can wait for them", async () => {
    const { runtime, server } = await runtimeWithServer();
    const turn = new Job({ kind: "acp-prompt-turn" });
    const step = new Job({ kind: "some-step" }, turn);
    const deep = runtime.dispatch({ threadId: "t", toolCallId: "deep", parent: step });
    const direct = runtime.dispatch({ threadId: "t", toolCallId: "direct", parent: turn });
    const unrelated = runtime.dispatch({ threadId: "t", toolCallId: "unrelated" });
    turn.cancel("session");
    assert.equal((await deep.outcome).reason, "session");
    assert.equal((await direct.outcome).interrupted, true);
    assert.equal(turn.childCount, 1, "only the non-RAP step is left under the turn");
    assert.equal(step.childCount, 0);
    assert.equal(runtime.size, 1);
    await runtime.idle();
    assert.deepEqual(server.arrivals.map((a) => JSON.parse(a.body).tool_call_id).sort(), ["deep", "direct"]);
    runtime.cancel("t", "unrelated");
    await unrelated.outcome;
  });

  it("cancelUnder cancels only the calls below a parent; a call started under a doomed parent starts cancelled", async () => {
    const { runtime } = await runtimeWithServer();
    const parent = new Job({ kind: "other-binding" });
    const below = runtime.dispatch({ threadId: "t", toolCallId: "below", parent });
    const beside = runtime.dispatch({ threadId: "t", toolCallId: "beside" });
    assert.equal(runtime.cancelUnder(parent), 1);
    assert.equal((await below.outcome).interrupted, true);
    assert.equal(parent.state, "running", "the parent itself is not cancelled");
    parent.cancel("deadline");
    const late = runtime.dispatch({ threadId: "t", toolCallId: "late", parent });
    assert.deepEqual([(await late.outcome).interrupted, (await late.outcome).reason], [true, "deadline"]);
    runtime.cancelThread("t");
    await beside.outcome;
    await runtime.idle();
    assert.equal(runtime.size, 0);
  });

  it("an aborted AbortSignal cancels the call; an already aborted one cancels it at once", async () => {
    const { runtime } = await runtimeWithServer();
    const controller = new AbortController();
    const call = runtime.dispatch({ threadId: "t", toolCallId: "c", signal: controller.signal });
    controller.abort();
    assert.equal((await call.outcome).interrupted, true);
    assert.equal(call.signal.aborted, true);
    const again = runtime.dispatch({ threadId: "t", toolCallId: "d", signal: AbortSignal.abort() });
    assert.equal((await again.outcome).interrupted, true);
    await runtime.idle();
    assert.equal(runtime.size, 0);
  });

  it("rejects a duplicate dispatch, bad ids and malformed results with messages naming what is wrong", async () => {
    const { runtime } = await runtimeWithServer();
    const call = runtime.dispatch({ threadId: "t", toolCallId: "c" });
    assert.throws(() => runtime.dispatch({ threadId: "t", toolCallId: "c" }), /already in flight/);
    assert.throws(() => runtime.dispatch({ threadId: "", toolCallId: "x" }), /threadId must not be empty/);
    assert.throws(() => runtime.dispatch({ threadId: "t", toolCallId: "a\nb" }), /toolCallId must not contain control characters/);
    assert.throws(() => runtime.deliver({ type: "tool_result", group_id: "t", id: "c" }), /tool_result needs text or content/);
    assert.throws(() => runtime.deliver({ type: "tool_result", group_id: 7, id: "c", text: "x" }), /group_id/);
    assert.equal(runtime.size, 1, "nothing changed");
    assert.equal(runtime.deliver({ type: "tool_result", group_id: "t", id: "c", content: [{ type: "text", text: "ok" }] }), "accepted");
    assert.equal((await call.outcome).interrupted, false);
  });

  it("invoke POSTs a schema-valid, signed invocation; a refused invocation ends the call with an Error result", async () => {
    const tool = await recordingServer((arrival, response) => {
      response.statusCode = arrival.url === "/broken" ? 503 : 200;
      response.end();
    });
    open.push(tool);
    const runtime = new RapRuntime({ servers: [tool.url], signer: (r) => r.headers.set("authorization", "Bearer t0k") });
    const call = runtime.invoke(`${tool.url}/invoke`, {
      threadId: "thread-9",
      toolCallId: "call-9",
      operation: "run",
      arguments: { command: "ls" },
      callbackUrl: "http://127.0.0.1:1/callback",
      userId: "u",
    });
    const failed = runtime.invoke(`${tool.url}/broken`, { threadId: "thread-9", toolCallId: "call-10", operation: "run", arguments: {}, callbackUrl: "http://127.0.0.1:1/cb" });
    assert.deepEqual(await failed.outcome, {
      result: { type: "tool_result", group_id: "thread-9", id: "call-10", call_id: "call-10", text: "Error: tool server answered the invocation with HTTP 503" },
      interrupted: false,
    });
    const invocation = tool.arrivals.find((a) => a.url === "/invoke");
    assert.ok(invocation);
    assert.equal(invocation.headers.authorization, "Bearer t0k");
    const parsed = invocationSchema.parse(JSON.parse(invocation.body));
    assert.deepEqual(parsed, {
      operation: "run",
      arguments: { command: "ls" },
      id: "call-9",
      call_id: "call-9",
      callback_url: "http://127.0.0.1:1/callback",
      group_id: "thread-9",
      thread_ancestors: [],
      user_id: "u",
    });
    runtime.deliver({ type: "tool_result", group_id: "thread-9", id: "call-9", text: "a.ts" });
    assert.equal((await call.outcome).result.text, "a.ts");
    assert.equal(runtime.size, 0);
  });
});

describe("RAP runtime and registry at shutdown", () => {
  it("cancelAll answers every call in flight with the synthetic result, once, and notices still go out", async () => {
    const server = await recordingServer((_a, response) => response.end());
    try {
      const runtime = new RapRuntime({ servers: [server.url] });
      const calls = [1, 2, 3].map((i) => runtime.dispatch({ threadId: `t${i}`, toolCallId: `c${i}` }));
      assert.equal(runtime.cancelAll(), 3);
      assert.equal(runtime.cancelAll(), 0, "nothing is answered twice");
      for (const call of calls) assert.deepEqual([(await call.outcome).interrupted, (await call.outcome).reason], [true, "shutdown"]);
      await runtime.idle();
      assert.equal(server.arrivals.length, 3);
      assert.equal(runtime.size, 0);
    } finally {
      await server.close();
    }
  });
});
