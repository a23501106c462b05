import assert from "node:assert/strict";
import type { CancellationToken } from "vscode-jsonrpc/node";
import { textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { type Line, recordLinesInto, vscodeClientFor } from "./support/vscode-client.js";

/**
 * A vscode-jsonrpc client (the binding) over a real SDK 2.4.0 agent subprocess, bare: the agent
 * does nothing on `session/cancel` for its pending permission request, so only the client's
 * own MUST can end the dialog. Records every line each side writes.
 */
function clientOverBareAgent() {
  const client = vscodeClientFor("sdk-agent", ["--bare"]);
  const received: Line[] = [];
  client.peer.child.stdout.on("data", recordLinesInto(received));
  return { ...client, received };
}

const answersTo = (lines: Line[], id: unknown) => lines.filter((m) => m.id === id && !("method" in m));

describe("vscode-jsonrpc binding: the client's own session/cancel answers its pending permission dialogs", () => {
  for (const dialog of ["ignores its token", "throws once its token fires"] as const) {
    it(`a dialog that ${dialog} is answered with the cancelled outcome, once; its token fires`, async () => {
      const client = clientOverBareAgent();
      const tokens: CancellationToken[] = [];
      client.connection.onRequest("session/request_permission", async (_params: unknown, token: CancellationToken) => {
        tokens.push(token);
        if (dialog === "throws once its token fires") {
          await new Promise<void>((resolve) => token.onCancellationRequested(() => resolve()));
          throw new Error("dialog closed");
        }
        return new Promise(() => {}); // the user never clicks
      });
      const updates: unknown[] = [];
      client.connection.onNotification("session/update", (params: unknown) => {
        updates.push(params);
      });
      client.connection.listen();
      try {
        const sessionId = await client.openSession();
        const prompt = client.connection.sendRequest("session/prompt", textPrompt(sessionId, "permission-report"));
        const ask = await eventually(
          () => client.received.find((m) => m.method === "session/request_permission"),
          "the permission request",
        );
        await client.connection.sendNotification("session/cancel", { sessionId });
        await prompt; // the bare agent ends its turn once its dialog is answered
        assert.deepEqual(
          answersTo(client.sent, ask.id).map((m) => m.result),
          [{ outcome: { outcome: "cancelled" } }],
          "exactly one answer, the cancelled outcome",
        );
        assert.ok(tokens[0]?.isCancellationRequested, "the handler's token fired");
        const reported = JSON.stringify(updates);
        assert.ok(reported.includes(JSON.stringify(JSON.stringify({ outcome: { outcome: "cancelled" } })).slice(1, -1)));
        assert.deepEqual(client.connection.inFlight, { outgoing: 0, incoming: 0 });
      } finally {
        await client.close();
      }
    });
  }

  it("a dialog of another session, and one still pending without a session/cancel, are left alone", async () => {
    const client = clientOverBareAgent();
    const tokens = new Map<string, CancellationToken>();
    const answers = new Map<string, (value: unknown) => void>();
    client.connection.onRequest(
      "session/request_permission",
      (params: { sessionId: string }, token: CancellationToken) =>
        new Promise((resolve) => {
          tokens.set(params.sessionId, token);
          answers.set(params.sessionId, resolve);
        }),
    );
    client.connection.listen();
    try {
      const first = await client.openSession();
      const second = (await client.connection.sendRequest<{ sessionId: string }>("session/new", { cwd: "/", mcpServers: [] }))
        .sessionId;
      const prompts = [first, second].map((sessionId) =>
        client.connection.sendRequest("session/prompt", textPrompt(sessionId, "permission-report")),
      );
      await eventually(() => (tokens.size === 2 ? true : undefined), "both dialogs open");
      await client.connection.sendNotification("session/cancel", { sessionId: first });
      await prompts[0];
      assert.equal(tokens.get(first)?.isCancellationRequested, true);
      assert.equal(tokens.get(second)?.isCancellationRequested, false);
      assert.equal(client.connection.inFlight.incoming, 1, "the other session's dialog is still open");
      answers.get(second)?.({ outcome: { outcome: "selected", optionId: "allow" } });
      await prompts[1];
      const asks = client.received.filter((m) => m.method === "session/request_permission");
      assert.deepEqual(
        asks.map((ask) => answersTo(client.sent, ask.id).map((m) => m.result)),
        [[{ outcome: { outcome: "cancelled" } }], [{ outcome: { outcome: "selected", optionId: "allow" } }]],
      );
      assert.deepEqual(client.connection.inFlight, { outgoing: 0, incoming: 0 });
    } finally {
      await client.close();
    }
  });
});
