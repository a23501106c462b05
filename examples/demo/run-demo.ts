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

const say = (text: string) => console.log(text);
say(`Part 1 of 2: pressing Stop on an agent that predates cancellation

An editor built on today's ACP SDK asks an agent to "refactor main.ts". The agent is built on an
older SDK (0.28.1), from before ACP had $/cancel_request, like many agents in use today. It asks
permission to edit a file; instead of answering, the user presses Stop. The editor sends
$/cancel_request, which this agent does not understand. The same thing runs twice: once with the
editor talking to the agent directly, once with acp-cancel's bridge in between.`);

const direct = await run("without the bridge", [AGENT]);
const bridged = await run("through acp-cancel bridge", [CLI, "bridge", "--", process.execPath, AGENT]);

for (const report of [direct, bridged]) {
  say(`\n${report.label}:`);
  for (const event of report.events) say(`  - ${event}`);
}
const ms = (value: number | undefined) => (value === undefined ? "never" : `${value.toFixed(1)} ms`);
say("\n                         without bridge   with bridge");
say(`turn ended after Stop   ${ms(direct.promptMs).padEnd(17)}${ms(bridged.promptMs)}`);
say(`dialog closed           ${ms(direct.dialogClosedMs).padEnd(17)}${ms(bridged.dialogClosedMs)}`);
say(`
What happened: without acp-cancel, Stop did nothing. The agent never saw a cancel it understood,
so the dialog stayed open and the turn went on working until the editor gave up and disconnected
(a user would see a spinner that never stops). Through the bridge, the same Stop was translated
into session/cancel, which the old agent does understand; the bridge also closed the open dialog.
The turn ended "cancelled" within milliseconds, and the editor's configuration changed by one line.
Times vary by machine and load; "never" does not.`);
process.exitCode = bridged.promptMs === undefined ? 1 : 0;

// One Stop across protocols: the same press of Stop, reaching MCP, RAP and A2A at once (ABP too in demo:cross)
// (`npm run demo:cross` runs it alone and writes its trace).
say(`
Part 2 of 2: one Stop reaches every piece of the work

Here the agent's turn has work spread over four other services, each over its own protocol: a
search in an MCP tool server, a build (a real child process) on a RAP tool server, and a report
written by another agent over A2A, whose cancels a guardian (AOS) must approve. The user presses
Stop once. Below, for each protocol: what was sent, and when each piece of work really stopped, in
ms after Stop. Without acp-cancel, session/cancel reaches only the agent: unless its author wires
the cancel into every call by hand, the search, the build and the report run on to their end.
`);
const { runCrossProtocol } = await import("../cross-protocol/session.js");
const { printOutcome, printRun } = await import("../cross-protocol/print.js");
// Without the browser here, to stay quick; `npm run demo:cross` includes ABP in headless Chromium.
const cross = await runCrossProtocol({ abp: false });
printRun(cross, say, "npm start leaves the browser out to stay quick; npm run demo:cross runs it in headless Chromium");
say(`
What happened: one Stop reached the search, the build and the report, each through its own
protocol's cancel.`);
printOutcome(cross, say);
say(`Why it matters: a Stop that only ends the chat turn while builds, searches and other agents keep
going wastes money and compute, and can leave files half-written. Times vary by machine and load.`);
