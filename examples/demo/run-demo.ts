/**
 * `npm start`: a modern editor (SDK 2.4.0) presses Stop on a turn whose permission dialog
 * is open, talking to a legacy agent — once directly, once through `acp-cancel bridge`.
 */
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const AGENT = fileURLToPath(new URL("./legacy-agent.js", import.meta.url));
const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
/** How long the demo waits for the turn to end after Stop before calling it stuck. */
const PATIENCE_MS = 2000;

interface RunReport {
  label: string;
  promptEnded: string;
  promptMs: number | undefined;
  dialogClosedMs: number | undefined;
  events: string[];
}

async function run(label: string, command: string[]): Promise<RunReport> {
  const child = spawn(process.execPath, command, { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
  );
  const events: string[] = [];
  let stopPressedAt = 0;
  let gaveUp = false;
  let dialogClosedMs: number | undefined;
  const since = () => performance.now() - stopPressedAt;
  const stop = new AbortController();
  const editor = acp.client({ name: "demo-editor" }).onRequest(
    acp.methods.client.session.requestPermission,
    ({ params, signal }) =>
      new Promise((resolve) => {
        events.push(`permission dialog opened: "${params.toolCall.title}"`);
        // The user does not answer; they press Stop instead.
        stopPressedAt = performance.now();
        events.push("user pressed Stop (the editor sends $/cancel_request for the prompt)");
        stop.abort();
        signal.addEventListener("abort", () => {
          if (gaveUp) {
            events.push("permission dialog still open until the editor disconnected");
          } else {
            dialogClosedMs = since();
            events.push(`permission dialog closed by $/cancel_request after ${dialogClosedMs.toFixed(1)} ms`);
          }
          resolve({ outcome: { outcome: "cancelled" } });
        });
      }),
  );
  let promptEnded = `still running ${PATIENCE_MS} ms after Stop`;
  let promptMs: number | undefined;
  await editor.connectWith(stream, async (agent) => {
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: process.cwd(),
      mcpServers: [],
    });
    const prompt = agent
      .request(
        acp.methods.agent.session.prompt,
        { sessionId, prompt: [{ type: "text", text: "refactor main.ts" }] },
        { cancellationSignal: stop.signal },
      )
      .then((response) => {
        promptMs = since();
        promptEnded = `stopReason "${response.stopReason}" after ${promptMs.toFixed(1)} ms`;
      });
    await Promise.race([prompt, new Promise((resolve) => setTimeout(resolve, PATIENCE_MS))]);
    gaveUp = promptMs === undefined;
  });
  child.stdin.end();
  await new Promise((resolve) => child.once("exit", resolve));
  events.push(`prompt: ${promptEnded}`);
  return { label, promptEnded, promptMs, dialogClosedMs, events };
}

const direct = await run("without the bridge", [AGENT]);
const bridged = await run("through acp-cancel bridge", [CLI, "bridge", "--", process.execPath, AGENT]);

for (const report of [direct, bridged]) {
  console.log(`\n${report.label}:`);
  for (const event of report.events) console.log(`  - ${event}`);
}
const ms = (value: number | undefined) => (value === undefined ? "never" : `${value.toFixed(1)} ms`);
console.log("\n                         without bridge   with bridge");
console.log(`turn ended after Stop   ${ms(direct.promptMs).padEnd(17)}${ms(bridged.promptMs)}`);
console.log(`dialog closed           ${ms(direct.dialogClosedMs).padEnd(17)}${ms(bridged.dialogClosedMs)}`);
process.exitCode = bridged.promptMs === undefined ? 1 : 0;

// One Stop across protocols: the same press of Stop, reaching MCP, RAP, A2A and ABP at once
// (`npm run demo:cross` runs it alone and writes its trace).
console.log("");
const { runCrossProtocol } = await import("../cross-protocol/session.js");
const { printRun } = await import("../cross-protocol/print.js");
// Without the browser here, to stay quick; `npm run demo:cross` includes ABP in headless Chromium.
printRun(await runCrossProtocol({ abp: false }), (line) => console.log(line), "left out of npm start to keep it short; npm run demo:cross runs it in headless Chromium");
