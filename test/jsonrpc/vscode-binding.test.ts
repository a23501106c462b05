import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { type CancellationToken, CancellationTokenSource, ResponseError } from "vscode-jsonrpc/node";
import { aborted, textPrompt } from "../support/client-harness.js";
import { collectLines, spawnFixture, tap, type WireRecord } from "../support/spawn-peer.js";
import { eventually, requestsIn } from "../support/wire-assertions.js";
import { type Line, vscodeClientFor } from "./support/vscode-client.js";

const cancelledWith = (code: number, reason?: string) => (error: unknown) => {
  assert.ok(error instanceof ResponseError || error instanceof acp.RequestError, String(error));
  assert.equal((error as { code: number }).code, code);
  if (reason !== undefined)
    assert.equal(((error as { data?: { reason?: string } }).data ?? {}).reason, reason);
  return true;
};

const tokenFired = (token: CancellationToken) =>
  new Promise<void>((resolve) => {
    if (token.isCancellationRequested) resolve();
    token.onCancellationRequested(() => resolve());
  });

describe("vscode-jsonrpc binding: ACP cancellation for vscode-jsonrpc apps", () => {
  describe("a vscode-jsonrpc client against a real SDK 2.4.0 agent", () => {
    it("cancels a prompt with a CancellationToken, and its handlers see the nested $/cancel_request", async () => {
      const client = vscodeClientFor("sdk-agent");
      const nestedTokens: CancellationToken[] = [];
      client.connection.onRequest(
        "session/request_permission",
        async (_params: unknown, token: CancellationToken) => {
          nestedTokens.push(token);
          await tokenFired(token);
          return { outcome: { outcome: "cancelled" } };
        },
      );
      client.connection.onRequest("fs/read_text_file", async (_params: unknown, token: CancellationToken) => {
        nestedTokens.push(token);
        await tokenFired(token);
        throw new Error("read aborted");
      });
      client.connection.listen();
      try {
        const sessionId = await client.openSession();
        const stop = new CancellationTokenSource();
        const prompt = client.connection.sendRequest(
          "session/prompt",
          textPrompt(sessionId, "nested"),
          stop.token,
        );
        await eventually(() => (nestedTokens.length === 2 ? true : undefined), "both nested requests");
        stop.cancel();
        assert.deepEqual(await prompt, { stopReason: "cancelled" });
        const promptId = client.sent.find((m) => m.method === "session/prompt")?.id;
        assert.deepEqual(
          client.sent.filter((m) => m.method === "$/cancel_request").map((m) => m.params),
          [{ requestId: promptId }],
          "ACP's notification, not LSP's $/cancelRequest",
        );
        assert.ok(nestedTokens.every((token) => token.isCancellationRequested));
        assert.deepEqual(client.connection.inFlight, { outgoing: 0, incoming: 0 });
      } finally {
        await client.close();
      }
    });

    it("cascade: a nested request sent from a cancelled handler gets $/cancel_request; every level answered once", async () => {
      const client = vscodeClientFor("sdk-agent");
      client.connection.onRequest("_test/deep", (params: unknown) =>
        client.connection.sendRequest("_test/leaf", params),
      );
      client.connection.listen();
      try {
        const sessionId = await client.openSession();
        const prompt = client.connection.sendRequest("session/prompt", textPrompt(sessionId, "deep"));
        const leaf = await eventually(
          () => client.sent.find((m) => m.method === "_test/leaf"),
          "the leaf request",
        );
        await client.connection.sendNotification("session/cancel", { sessionId });
        assert.deepEqual(await prompt, { stopReason: "cancelled" });
        await eventually(
          () => (client.sent.some((m) => m.method === "$/cancel_request") ? true : undefined),
          "the leaf's cancel",
        );
        assert.deepEqual(
          client.sent.filter((m) => m.method === "$/cancel_request").map((m) => m.params),
          [{ requestId: leaf.id }],
        );
        const deepId = await eventually(
          () => client.sent.find((m) => !("method" in m) && m.error !== undefined)?.id,
          "the deep request's answer",
        );
        const deepAnswers = client.sent.filter((m) => m.id === deepId && !("method" in m));
        assert.equal(deepAnswers.length, 1, "the deep request answered once");
        assert.equal((deepAnswers[0]?.error as { code: number }).code, -32800);
        assert.deepEqual(client.connection.inFlight, { outgoing: 0, incoming: 0 });
      } finally {
        await client.close();
      }
    });

    it("deadlines reject with -32800 reason 'deadline', and close rejects pending requests at once", async () => {
      const client = vscodeClientFor("sdk-agent", [], { deadlines: { "_test/slow": 50 } });
      client.connection.listen();
      try {
        await client.connection.sendRequest("initialize", { protocolVersion: 1, clientCapabilities: {} });
        await assert.rejects(client.connection.sendRequest("_test/slow", {}), cancelledWith(-32800));
        const pending = client.connection.sendRequest("_test/leaf", {});
        await eventually(
          () => (client.sent.some((m) => m.method === "_test/leaf") ? true : undefined),
          "sent",
        );
        client.peer.child.kill("SIGKILL");
        await assert.rejects(pending, cancelledWith(-32800, "shutdown"));
        assert.deepEqual(client.connection.inFlight, { outgoing: 0, incoming: 0 });
      } finally {
        await client.close();
      }
    });
  });

  describe("a vscode-jsonrpc agent, driven by a real SDK 2.4.0 client and by raw lines", () => {
    type ClientApp = ReturnType<typeof acp.client>;
    async function withSdkClient(
      args: string[],
      body: (
        agent: Parameters<Parameters<ClientApp["connectWith"]>[1]>[0],
        log: WireRecord[],
      ) => Promise<void>,
      client: ClientApp = acp.client({ name: "editor" }),
    ) {
      const peer = spawnFixture("vscode-agent", args);
      const log: WireRecord[] = [];
      const stream = tap(acp.ndJsonStream(peer.output, peer.input) as acp.Stream & { readable: never }, log);
      try {
        await client.connectWith(stream, async (agent) => {
          // One round trip first, so the peer is listening before anything is cancelled.
          await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
          await body(agent, log);
        });
      } finally {
        peer.child.stdin.end();
        await peer.exited;
      }
    }

    /** Waits until the agent's handlers for `methods` have started: a cancel before that is "before dispatch". */
    async function handlersRunning(agent: Parameters<Parameters<ClientApp["connectWith"]>[1]>[0], ...methods: string[]) {
      for (;;) {
        const { runs } = await agent.request<{ runs: Record<string, number> }>("_test/state", {});
        if (methods.every((method) => runs[method] === 1)) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    it("a handler that observes its token is answered -32800 (not -32603); one that returns a partial result passes it", async () => {
      await withSdkClient([], async (agent) => {
        const stop = new AbortController();
        const slow = agent.request("_test/slow", {}, { cancellationSignal: stop.signal });
        const stopPartial = new AbortController();
        const partial = agent.request("_test/partial", {}, { cancellationSignal: stopPartial.signal });
        await handlersRunning(agent, "_test/slow", "_test/partial");
        stop.abort();
        stopPartial.abort();
        await assert.rejects(slow, cancelledWith(-32800));
        assert.deepEqual(await partial, { partial: true, items: [1, 2] });
        const state = await agent.request<{ inFlight: unknown }>("_test/state", {});
        assert.deepEqual(state.inFlight, { outgoing: 0, incoming: 1 }, "only _test/state itself");
      });
    });

    it("a handler that ignores its token is answered -32800 after the grace period", async () => {
      await withSdkClient(["--grace-ms", "100"], async (agent) => {
        const stop = new AbortController();
        const never = agent.request("_test/never", {}, { cancellationSignal: stop.signal });
        await handlersRunning(agent, "_test/never");
        stop.abort();
        await assert.rejects(never, cancelledWith(-32800, "external"));
      });
    });

    it("the agent's nested request to the client is cancelled when its handler is", async () => {
      const client = acp.client({ name: "editor" }).onRequest("*", async ({ signal }) => {
        await aborted(signal);
        throw signal.reason;
      });
      await withSdkClient(
        [],
        async (agent, log) => {
          const stop = new AbortController();
          const ask = agent.request(
            "_test/ask-client",
            { sessionId: "s" },
            { cancellationSignal: stop.signal },
          );
          await eventually(
            () => (requestsIn(log, "in", "_test/client-work").length ? true : undefined),
            "nested request",
          );
          stop.abort();
          await assert.rejects(ask, cancelledWith(-32800));
          const nestedId = requestsIn(log, "in", "_test/client-work")[0]?.id;
          await eventually(
            () =>
              log.some(
                (r) =>
                  r.direction === "in" &&
                  r.message.method === "$/cancel_request" &&
                  (r.message.params as { requestId: unknown }).requestId === nestedId,
              )
                ? true
                : undefined,
            "$/cancel_request for the nested request",
          );
        },
        client,
      );
    });

    it("a request cancelled before dispatch is answered -32800 and its handler never runs", async () => {
      const peer = spawnFixture("vscode-agent");
      const received: Line[] = collectLines(peer.child.stdout);
      try {
        // One write: the request and its cancel reach the connection before it dispatches.
        peer.child.stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "_test/slow", params: {} })}\n${JSON.stringify({
            jsonrpc: "2.0",
            method: "$/cancel_request",
            params: { requestId: 7 },
          })}\n`,
        );
        const answer = await eventually(() => received.find((m) => m.id === 7), "the answer");
        assert.equal((answer.error as { code: number }).code, -32800);
        assert.equal((answer.error as { data: { detail: string } }).data.detail, "cancelled before dispatch");
        peer.child.stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: 8, method: "_test/state", params: {} })}\n`,
        );
        const state = await eventually(() => received.find((m) => m.id === 8), "the state");
        assert.deepEqual((state.result as { runs: unknown }).runs, {}, "no handler ran");
      } finally {
        peer.child.stdin.end();
        await peer.exited;
      }
    });
  });
});

describe("vscode-jsonrpc binding: a peer's line nested too deeply to serialise", () => {
  it("is reported as a bounded error naming the line's start; the connection goes on", async () => {
    const client = vscodeClientFor("deep-answer-agent", ["deep-line"]);
    void client.peer.input.pipeTo(new WritableStream()); // the harness's Web view of stdout must not hold it back
    const errors: string[] = [];
    client.connection.onError(([error]) => errors.push(error.message));
    client.connection.listen();
    try {
      assert.equal(await client.openSession(), "deep-1");
      await eventually(() => (errors.length > 0 ? true : undefined), "the deep line reported");
      assert.equal(errors[0], `ignored a line that is not a JSON-RPC object: ${"[".repeat(80)}…`);
    } finally {
      await client.close();
    }
  });
});
