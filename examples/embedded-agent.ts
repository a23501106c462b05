/**
 * An ACP agent built with @agentclientprotocol/sdk 2.4.0 that adopts acp-cancel in one line.
 * It speaks ndjson over stdio; run it through examples/embedded-client.ts.
 *
 * Its prompt handler is written as if cancellation did not exist: it threads no signal into
 * the requests it makes and never checks one. acp-cancel still stops it: on `session/cancel`
 * the engine cancels the turn and every request the handler has outstanding (the permission
 * dialog is answered `cancelled` at once, the file read gets `$/cancel_request`), any request
 * it tries after that is answered -32800 without leaving the process, and whatever the
 * handler then returns or throws becomes `stopReason: "cancelled"`.
 */
import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import * as acp from "@agentclientprotocol/sdk";
import { withCancellation } from "../src/index.js";

const { methods } = acp;

// The one line: everything else below is plain SDK code.
const app = withCancellation(acp.agent({ name: "example-agent" }));

let sessions = 0;
app
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
  }))
  .onRequest(methods.agent.session.new, () => ({ sessionId: `session-${++sessions}` }))
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    // The go-ahead and the file, asked for together; no signal anywhere.
    const [permission, file] = await Promise.all([
      client.request(methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "edit-1", title: "Edit notes.txt" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      }),
      client.request(methods.client.fs.readTextFile, { sessionId, path: "/tmp/notes.txt" }),
    ]);
    if (permission.outcome.outcome !== "selected" || permission.outcome.optionId !== "allow") {
      return { stopReason: "end_turn" };
    }
    // Model work: streams a little text, then "thinks" for a while.
    await client.notify(methods.client.session.update, {
      sessionId,
      update: {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: `Editing ${file.content.length} characters...` },
      },
    });
    await sleep(1000);
    return { stopReason: "end_turn" };
  });

const connection = app.connect(
  acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
  ),
);
// The client closing our stdin ends the connection; leave without waiting for stray timers.
void connection.closed.then(() => process.exit(0));
