/**
 * An ACP client built with @agentclientprotocol/sdk 2.4.0 that adopts acp-cancel in one line.
 * It spawns examples/embedded-agent.ts (compiled), prompts it, and presses "Stop" as soon as
 * the agent's permission dialog opens. Then it prints what was cancelled and when.
 *
 *   npx tsc -p tsconfig.test.json && node build/examples/embedded-client.js
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { type EngineEvent, withCancellation } from "../src/index.js";

const { methods } = acp;
const started = performance.now();
const log = (line: string) =>
  console.log(`${(performance.now() - started).toFixed(1).padStart(7)} ms  ${line}`);

// What the engine does is visible through `onEvent`; only the cancellations are printed here.
// Ids are per issuer (the agent's #1 is not the client's #1), so the issuer is named too.
function describe(event: EngineEvent): string | undefined {
  if (event.type === "cancel")
    return `cancelled ${event.method} (${event.side} #${event.id}, ${event.reason})`;
  if (event.type === "cancelled-at-birth")
    return `cancelled at birth ${event.method} (${event.side} #${event.id}): it arrived after Stop`;
  return undefined;
}

let openDialog!: () => void;
const dialogOpened = new Promise<void>((resolve) => {
  openDialog = resolve;
});

const client = withCancellation(acp.client({ name: "example-client" }), {
  onEvent: (event) => {
    const line = describe(event);
    if (line !== undefined) log(line);
  },
})
  // A modal dialog: it waits for the user, and closes itself if the request is cancelled.
  .onRequest(methods.client.session.requestPermission, ({ signal }) => {
    log("permission dialog open");
    openDialog();
    return new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true });
    });
  })
  // An ordinary file read that honours its signal, as the SDK allows.
  .onRequest(methods.client.fs.readTextFile, async ({ params, signal }) => ({
    content: await readFile(params.path, { encoding: "utf8", signal }).catch((error: unknown) => {
      if (signal.aborted) throw error;
      return ""; // no such file: an empty buffer
    }),
  }));

const agentPath = fileURLToPath(new URL("./embedded-agent.js", import.meta.url));
const child = spawn(process.execPath, [agentPath], { stdio: ["pipe", "pipe", "inherit"] });
const exited = once(child, "exit");
const stream = acp.ndJsonStream(
  Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
  Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
);

await client.connectWith(stream, async (agent) => {
  await agent.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
  });
  // Our engine added its capability to our initialize and read the agent's from the answer.
  const engine = client.cancellations[0]?.engine;
  log(`agent advertises ${JSON.stringify(engine?.peerCapabilities.agent)}`);
  const { sessionId } = await agent.request(methods.agent.session.new, {
    cwd: process.cwd(),
    mcpServers: [],
  });

  log("prompt sent");
  const prompt = agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Tidy up notes.txt" }],
  });
  await dialogOpened;
  // The user presses Stop instead of answering. A notification: nothing is awaited but the prompt.
  log("user pressed Stop: session/cancel sent");
  await agent.notify(methods.agent.session.cancel, { sessionId });
  const result = await prompt;
  log(`prompt ended: ${JSON.stringify(result)}`);
  log(`engine stats: ${JSON.stringify(engine?.stats)}`);
  log(`in flight: ${JSON.stringify(engine?.inFlight)}`);
});

// Leaving connectWith stops the SDK reading, but it never closes the stream it writes to:
// end the agent's stdin ourselves so that the agent sees EOF and exits.
child.stdin.end();
const [code] = await exited;
log(`agent exited with code ${code}`);
