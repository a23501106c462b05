/**
 * A VS Code-style ACP client on vscode-jsonrpc: spawn an agent, prompt, and cancel the turn
 * with a CancellationToken, as an extension does when the user presses Stop.
 *
 *   node build/examples/vscode-client.js            (uses the bundled embedded-agent example)
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CancellationToken, CancellationTokenSource } from "vscode-jsonrpc/node";
import { createAcpMessageConnection } from "../src/jsonrpc/index.js";

const agentPath = fileURLToPath(new URL("./embedded-agent.js", import.meta.url));
const agent = spawn(process.execPath, [agentPath], { stdio: ["pipe", "pipe", "inherit"] });
const connection = createAcpMessageConnection(agent.stdout, agent.stdin, { deadlines: { "fs/read_text_file": 30_000 } });

const waitFor = (token: CancellationToken) =>
  new Promise<void>((resolve) => (token.isCancellationRequested ? resolve() : token.onCancellationRequested(resolve)));

// A permission dialog: it stays open until the user answers, or until the agent cancels it.
connection.onRequest("session/request_permission", async (_params: unknown, token: CancellationToken) => {
  await waitFor(token);
  return { outcome: { outcome: "cancelled" } };
});
connection.onRequest("fs/read_text_file", async (_params: unknown, token: CancellationToken) => {
  await waitFor(token);
  throw new Error("read abandoned");
});
connection.onNotification("session/update", () => {});
connection.listen();

await connection.sendRequest("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } });
const { sessionId } = await connection.sendRequest<{ sessionId: string }>("session/new", { cwd: process.cwd(), mcpServers: [] });
const stop = new CancellationTokenSource();
const started = performance.now();
const turn = connection.sendRequest<{ stopReason: string }>(
  "session/prompt",
  { sessionId, prompt: [{ type: "text", text: "refactor main.ts" }] },
  stop.token,
);
setTimeout(() => stop.cancel(), 100); // the user presses Stop
const { stopReason } = await turn;
console.log(`turn ended "${stopReason}" ${(performance.now() - started - 100).toFixed(1)} ms after Stop`);
console.log(`in flight afterwards: ${JSON.stringify(connection.inFlight)}`);
connection.dispose();
agent.stdin.end();
