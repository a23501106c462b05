import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { CLI } from "../support/bridge-harness.js";
import { HANG_LIMIT_MS } from "../support/wire-assertions.js";

/** Runs the real CLI with stdin closed; returns its status and output. */
function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input: "", encoding: "utf8", timeout: HANG_LIMIT_MS });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** What each command's own help must show: its usage line and every flag it takes. */
const OWN_HELP: Record<string, RegExp[]> = {
  bridge: [
    /^Usage: acp-cancel bridge \[options\] -- <agent command> \[args\.\.\.\]/,
    ...[
      "--grace-ms", "--timeout", "--cleanup-method", "--max-line-bytes", "--emulate", "--assume-support",
      "--exit-grace-ms", "--kill-grace-ms", "--turn-end-window-ms", "--on-stuck", "--trace FILE", "--trace-secrets",
      "--prompt-stops-turn", "--keep-turn-processes", "--otel", "--log-level", "--log-file", "-h, --help",
    ].map((flag) => new RegExp(`\\n {2}${flag.replace(/[-]/g, "\\-")}`)),
    /initialize has one by default: 60 s/,
    /Exit status:/,
  ],
  check: [
    /^Usage: acp-cancel check \[options\] -- <agent command>/,
    /\n {2}--model-server/,
    /\n {2}--json FILE/,
    /69 the agent could not be used/,
  ],
  trace: [/^Usage: acp-cancel trace <trace\.jsonl> \[--mermaid\]/, /\n {2}--mermaid/, /\n {2}-h, --help/, /65 the file is not/],
  guardian: [
    /^Usage: acp-cancel guardian --rules FILE --port N/,
    /\n {2}--rules FILE/,
    /\n {2}--port N/,
    /\n {2}--host HOST/,
    /\n {2}--redis URL/,
    /69 cannot listen/,
  ],
};

describe("CLI help: each command's own usage and flags, for --help and -h, exit 0", () => {
  for (const [command, expected] of Object.entries(OWN_HELP)) {
    for (const flag of ["--help", "-h"]) {
      it(`${command} ${flag}`, () => {
        const run = cli(command, flag);
        assert.equal(run.status, 0, run.stderr);
        for (const pattern of expected) assert.match(run.stdout, pattern);
        for (const other of Object.keys(OWN_HELP).filter((name) => name !== command))
          assert.doesNotMatch(run.stdout, new RegExp(`^Usage: acp-cancel ${other}`, "m"), `not ${other}'s help`);
      });
    }
  }

  it("the help flag wins anywhere among a command's own arguments, even next to a mistake", () => {
    for (const args of [["bridge", "--grace-ms", "100", "-h"], ["trace", "some.jsonl", "--help"], ["guardian", "--port", "x", "-h"]]) {
      const run = cli(...args);
      assert.equal(run.status, 0, args.join(" "));
      assert.match(run.stdout, new RegExp(`^Usage: acp-cancel ${args[0]}`));
    }
  });

  it("'help <command>' prints that command's help; the top level lists the commands", () => {
    const help = cli("help", "trace");
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: acp-cancel trace/);
    for (const flag of ["--help", "-h"]) {
      const top = cli(flag);
      assert.equal(top.status, 0);
      assert.match(top.stdout, /acp-cancel guardian --rules FILE --port N \[--host 127\.0\.0\.1\] \[--redis URL\]\n/);
      assert.match(top.stdout, /Commands:\n {2}bridge .*\n {2}check .*\n {2}trace .*\n {2}guardian /);
      assert.match(top.stdout, /acp-cancel <command> --help/);
    }
  });

  it("after '--' a --help is the agent's, not the bridge's", () => {
    // `echo --help` as the agent: its stdout line is not protocol, so the bridge logs it.
    const run = cli("bridge", "--", "echo", "--help");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /agent stdout: line is not valid JSON .*--help/);
  });

  it("'help <unknown>' is a usage error (exit 2) naming the commands", () => {
    const run = cli("help", "nope");
    assert.equal(run.status, 2);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /^acp-cancel: no help on 'nope': the commands are bridge, check, trace, guardian\n/);
  });

  it("flag mistakes read as one plain line: no node advice, no unbalanced quote, no escaped newline", () => {
    const cases: [string[], string][] = [
      [["bridge", "--bogus", "--", "x"], "unknown option '--bogus' (the agent's own options go after '--')"],
      [["guardian", "--bogus"], "unknown option '--bogus'"],
      [["bridge", "--grace-ms", "-5", "--", "x"], "--grace-ms needs a value, and the next argument starts with '-' (a value starting with '-' is written --grace-ms=VALUE)"],
      [["bridge", "--otel=1", "--", "x"], "--otel takes no value"],
      [["bridge", "node", "agent.js"], "the agent command goes after '--' (acp-cancel bridge [options] -- node agent.js), got 'node agent.js' without it"],
    ];
    for (const [args, message] of cases) {
      const run = cli(...args);
      assert.equal(run.status, 2, args.join(" "));
      const [first, second] = run.stderr.split("\n");
      assert.equal(first, `acp-cancel: ${message}`);
      assert.match(second ?? "", /^Run 'acp-cancel (bridge|guardian) --help' for usage\.$/);
    }
  });

  it("docs/bridge.md's flag table lists every flag the bridge's help lists", () => {
    const flags = [...cli("bridge", "--help").stdout.matchAll(/^ {2}(--[a-z-]+)/gm)].map((match) => match[1]);
    const table = readFileSync(new URL("../../../docs/bridge.md", import.meta.url), "utf8").split("## Flags")[1]?.split("\n\n")[1] ?? "";
    assert.ok(flags.length > 10);
    for (const flag of flags) assert.match(table, new RegExp(`^\\| \`${flag}[ \`]`, "m"), flag);
  });

  it("a usage error points at the command's own help", () => {
    const run = cli("trace", "a.jsonl", "--bogus");
    assert.equal(run.status, 2);
    assert.match(run.stderr, /Run 'acp-cancel trace --help' for usage/);
  });
});
