/**
 * `npm run demo:cross`: one Stop reaches everything. An ACP agent (SDK 2.4.0, one line of
 * acp-cancel) whose turn is at once calling an MCP tool, running a RAP tool call (a child
 * process on an HTTP tool server), waiting on an A2A task (behind an AOS guardian) and
 * rendering in a browser app over ABP. The editor presses Stop; the demo prints, per protocol,
 * what was sent and when the work stopped, and writes a trace for `acp-cancel trace`.
 *
 * Every party exports its jobs as OpenTelemetry spans (official OTLP/HTTP exporter) to a
 * receiver the demo runs on loopback; the demo then prints the one trace as a tree and exits
 * non-zero unless it is one connected trace with every hop and its cancel. With
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, each export is passed
 * on there too (Jaeger, Tempo…), with OTEL_EXPORTER_OTLP_HEADERS.
 *
 *   node build/examples/cross-protocol/run-demo.js [--trace FILE]
 */
import { otlpReceiver, type ReceivedSpan } from "../otel/otlp-receiver.js";
import { renderSpanTree, spansAsTrace, traceShape } from "../otel/span-tree.js";
import { crossOutputFiles, writeOutput } from "./output-files.js";
import { printRun } from "./print.js";
import { runCrossProtocol } from "./session.js";
import { toTrace } from "./trace.js";
import { checkCrossTrace, crossHops } from "./trace-check.js";

const write = (line: string) => process.stdout.write(`${line}\n`);
const { trace: traceFile, spans: spansFile, otlp: otlpFile } = crossOutputFiles(process.argv.slice(2));

/** Where a user's backend takes traces, from the standard variables; undefined when none is set. */
function backendUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, "")}/v1/traces`;
  return undefined;
}

/** The backend's headers, as the exporter reads them: `key=value` pairs, comma-separated, URL-encoded. */
function backendHeaders(env: NodeJS.ProcessEnv): Record<string, string> {
  const list = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? "";
  const pairs = list.split(",").map((pair) => pair.split("=")).filter((pair) => pair.length >= 2 && pair[0]?.trim());
  return Object.fromEntries(pairs.map(([key = "", ...value]) => [decodeURIComponent(key.trim()), decodeURIComponent(value.join("=").trim())]));
}

const forwardTo = backendUrl(process.env);
let forwardFailed = false;
const receiver = await otlpReceiver({
  ...(forwardTo === undefined ? {} : { forwardTo, forwardHeaders: backendHeaders(process.env) }),
  onForwardError: (error) => {
    if (!forwardFailed) process.stderr.write(`could not pass the spans on to ${forwardTo}: ${error.message}\n`);
    forwardFailed = true;
  },
});
const exported = (service: string) => receiver.spans.some((span) => span.service === service);
let run: Awaited<ReturnType<typeof runCrossProtocol>>;
try {
  run = await runCrossProtocol({ otlpEndpoint: receiver.url });
  // Every party flushed before it went; a last export may still be on its way.
  const services = [...new Set(crossHops(run.abp).map((hop) => hop.service))];
  for (let waited = 0; waited < 3000 && !services.every(exported); waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
} finally {
  await receiver.close();
}
const spans: readonly ReceivedSpan[] = receiver.spans;

printRun(run, write);
writeOutput(traceFile, toTrace(run.events));
write(`\nTrace: ${traceFile}\n  acp-cancel trace ${traceFile}            (timeline)`);
write(`  acp-cancel trace ${traceFile} --mermaid  (sequence diagram)`);

const check = checkCrossTrace(spans, run.abp, run.traceId);
const turn = check.spans;
const others = traceShape(spans.filter((s) => s.traceId !== run.traceId));
write(`\nOpenTelemetry: the turn is trace ${run.traceId ?? "(none)"}, ${turn.length} spans from ${new Set(turn.map((s) => s.service)).size} services:`);
for (const line of renderSpanTree(turn)) write(`  ${line}`);
write(`(Besides the turn: ${others.roots.length} traces of their own, one per other request: ${[...new Set(others.roots.map((s) => s.name))].join(", ")}.)`);
writeOutput(spansFile, spansAsTrace(turn));
writeOutput(otlpFile, receiver.exports.map((body) => body.replace(/\n/g, "")).join("\n") + "\n");
write(`Spans: ${otlpFile} (OTLP JSON, one export per line)`);
write(`  acp-cancel trace ${spansFile}  (the spans as a timeline; --mermaid for a diagram)`);
if (forwardTo !== undefined) write(`  also sent to ${forwardTo}${forwardFailed ? " (failed, see above)" : ""}`);
if (check.problems.length === 0) {
  write(`One trace: ${run.traceId ?? ""}, ${turn.length} spans, every hop a span with its cancel.`);
} else {
  write(`Not one connected trace with every hop:\n${check.problems.map((p) => `  - ${p}`).join("\n")}`);
}
const cancelled = (run.answer as { stopReason?: unknown }).stopReason === "cancelled";
// The MCP task's work is really stopped: its process is gone and the task says `cancelled`.
const mcpStopped = !run.mcp.stillRunning && run.mcp.status === "cancelled";
process.exitCode = cancelled && mcpStopped && check.problems.length === 0 ? 0 : 1;
