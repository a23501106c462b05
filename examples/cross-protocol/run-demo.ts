/**
 * `npm run demo:cross`: one Stop reaches everything. An ACP agent (SDK 2.4.0, one line of
 * acp-cancel) whose turn is at once calling an MCP tool, running a RAP tool call (a child
 * process on an HTTP tool server), waiting on an A2A task (behind an AOS guardian) and
 * rendering in a browser app over ABP. The editor presses Stop; the demo prints, per protocol,
 * what was sent and when the work stopped, and writes a trace for `acp-cancel trace`.
 *
 *   node build/examples/cross-protocol/run-demo.js [--trace FILE]
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printRun } from "./print.js";
import { runCrossProtocol } from "./session.js";
import { toTrace } from "./trace.js";

const index = process.argv.indexOf("--trace");
const traceFile = index === -1 ? join(tmpdir(), "acp-cancel-cross.trace.jsonl") : (process.argv[index + 1] ?? "");
const run = await runCrossProtocol();
printRun(run, (line) => process.stdout.write(`${line}\n`));
writeFileSync(traceFile, toTrace(run.events));
process.stdout.write(`\nTrace: ${traceFile}\n  acp-cancel trace ${traceFile}            (timeline)\n`);
process.stdout.write(`  acp-cancel trace ${traceFile} --mermaid  (sequence diagram)\n`);
process.exitCode = (run.answer as { stopReason?: unknown }).stopReason === "cancelled" ? 0 : 1;
