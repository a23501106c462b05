// Which test files run where: the one place that sorts tests by cost (scripts/test-suite.mjs reads it).
//
// `npm test` runs every *.test.ts under test/ that no excluding suite below lists. A new test file
// therefore runs in `npm test` until it is listed here. List it when it is slow: real processes that
// take over a second per test, a Chromium page per test, third-party agents, long loops. Keep one
// test of each behaviour in `npm test` (in process where it can be): when you list a file, say in the
// `covered by` comment which fast test still checks its behaviour, or add an in-process one.
//
// Paths are relative to test/, with the source name (.ts); a path ending in "/" is a whole folder.
// Each suite is an npm script: `npm run test:<name>`. `npm run test:all` runs `npm test`'s suite
// and then each of these in turn (what .ci/run does).

/**
 * @typedef {object} Suite
 * @property {string} about what the suite holds
 * @property {string[]} paths test files ("dir/name.test.ts") or folders ("dir/"), relative to test/
 * @property {boolean} excludeFromFast whether npm test leaves these files out
 * @property {number} timeoutMs mocha's per-test timeout (0: none)
 * @property {Record<string, string>} [env] set for the run
 */

/** @type {Record<string, Suite>} */
export const SUITES = {
  process: {
    about: "real processes (bridge, CLI, SDK peers over stdio) whose behaviour npm test keeps in a cheaper test",
    excludeFromFast: true,
    timeoutMs: 60_000,
    paths: [
      "bridge/turn-processes.test.ts", //     covered by: bridge/turn-process-spans.test.ts (whose processes, stuck, shutdown; in process), os/process-table.test.ts
      "bridge/stuck-turns.test.ts", //        covered by: acp/turn-aftermath*.test.ts (in process), bridge/emulation.test.ts
      "bridge/v2.test.ts", //                 covered by: acp/engine-v2.test.ts, acp/embedded-v2.test.ts, bridge/v2-raw.test.ts
      "bridge/fidelity.test.ts", //           covered by: bridge/ndjson-endpoint.test.ts, bridge/emulation.test.ts
      "bridge/trace-and-demo.test.ts", //     covered by: cli/parse-and-render.test.ts (trace, in process); npm start runs the demo
      "cli/input-errors.test.ts", //          covered by: cli/parse-and-render.test.ts (in process), bridge/lifecycle.test.ts (exit 2)
      "otel/bridge-otel-exit.test.ts", //     covered by: otel/bridge-otel.test.ts (the export timeout read from the variables)
      "cli/global-install.test.ts", //        covered by: bridge/optional-packages.test.ts (the missing list and the npm command, in process)
      "acp/cleanup-after-stop.test.ts", //    covered by: acp/cleanup-methods.test.ts (in process)
      "acp/turn-aftermath-embedded.test.ts", // covered by: acp/turn-aftermath*.test.ts (in process)
      "acp/embedded-v2.test.ts", //           covered by: acp/engine-v2.test.ts, acp/turn-aftermath-v2.test.ts (in process), bridge/v2-raw.test.ts
      "mcp/acp-turn.test.ts", //              covered by: mcp/client.test.ts, mcp/server.test.ts, a2a/acp-turn.test.ts
      "reliability/faults.test.ts", //        covered by: bridge/lifecycle.test.ts, reliability/engine-soak.test.ts
      "reliability/bad-input.test.ts", //     covered by: wire/*.test.ts, acp/engine.test.ts (bad lines, in process)
      "reliability/backpressure.test.ts", //  covered by: wire/ndjson-writer.test.ts
      "reliability/cancel-flood.test.ts", //  covered by: acp/engine.test.ts (unknown ids, in process)
      "a2a/guardian-flood.test.ts", //        covered by: a2a/guardian-hardening.test.ts (401 before the per-client count)
      "check/check-command.test.ts", //       covered by: check/scorecard.test.ts (verdicts and renderings, in process)
      "otel/cross-process.test.ts", //        covered by: otel/acp-spans, otel/mcp-spans, otel/rap-a2a-spans (each hop's parenting, in process), otel/bridge-otel
    ],
  },
  mcp: {
    about: "MCP tasks and the 2026 MCP across processes: both SDK lines as subprocesses over stdio and Streamable HTTP",
    excludeFromFast: true,
    timeoutMs: 30_000,
    paths: [
      "mcp/tasks-process.test.ts", //         covered by: mcp/tasks.test.ts, mcp/task-bad-input.test.ts, mcp/second-line.test.ts (in process)
    ],
  },
  browser: {
    about: "headless Chromium beyond the ABP edge cases that npm test keeps",
    excludeFromFast: true,
    timeoutMs: 30_000,
    paths: [
      "abp/lifecycle.test.ts", //             covered by: abp/edge-cases.test.ts, abp/client.test.ts
      "abp/progress.test.ts", //              covered by: abp/edge-cases.test.ts
      "abp/acp-turn.test.ts", //              covered by: abp/client.test.ts, a2a/acp-turn.test.ts
      "cross/cross-protocol.test.ts", //      covered by: the per-binding acp-turn tests; npm run demo:cross
    ],
  },
  interop: {
    about: "third-party ACP peers (acpx, codex-acp, claude-agent-acp v1/v2, gemini-cli, qwen-code, opencode, copilot-cli, older SDK lines), every cell",
    excludeFromFast: true,
    timeoutMs: 60_000,
    env: { ACP_CANCEL_INTEROP: "1" },
    // covered by: acp/embedded-*.test.ts, bridge/emulation.test.ts (SDK 0.28.1 and 2.4.0),
    // check/model-server.test.ts (the scripted model)
    paths: ["interop/"],
  },
  replicas: {
    about: "cancels across replicas (Debian redis-server, postgresql, haproxy as real processes)",
    excludeFromFast: true,
    timeoutMs: 60_000,
    paths: ["replicas/"],
  },
  soak: {
    about: "the reliability suite scaled up (ACP_CANCEL_SOAK=1); its in-process files also run in npm test",
    excludeFromFast: false,
    timeoutMs: 0,
    env: { ACP_CANCEL_SOAK: "1" },
    paths: ["reliability/"],
  },
};

/** The order `npm run test:all` and .ci/run take. */
export const ALL = ["fast", "process", "mcp", "browser", "interop", "replicas", "soak"];
