import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI } from "../support/bridge-harness.js";
import { HANG_LIMIT_MS } from "../support/wire-assertions.js";

/** Runs the real CLI with stdin closed; returns its status and output. */
function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input: "", encoding: "utf8", timeout: HANG_LIMIT_MS });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A clear one-line message: names `what`, and no stack trace. */
function assertClear(stderr: string, what: RegExp) {
  assert.match(stderr, what);
  assert.doesNotMatch(stderr, /\n\s+at /, `no stack trace:\n${stderr}`);
}

describe("CLI input errors: a clear message and a documented exit status, never a stack", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-cli-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  describe("acp-cancel trace", () => {
    it("a missing file: 66, naming the file", () => {
      const missing = join(dir, "missing.jsonl");
      const run = cli("trace", missing);
      assert.equal(run.status, 66);
      assertClear(run.stderr, new RegExp(`cannot read trace '${missing}': no such file or directory`));
    });

    it("a directory: 66", () => {
      const run = cli("trace", dir);
      assert.equal(run.status, 66);
      assertClear(run.stderr, /is a directory/);
    });

    it("a file that is not JSONL: 65, naming the line", () => {
      const run = cli("trace", file("pretty.json", '{\n  "t": 1\n}\n'));
      assert.equal(run.status, 65);
      assertClear(run.stderr, /line 1 is not JSON/);
    });

    it("JSON lines that are not trace entries: 65, naming the first bad line", () => {
      const lines = ['{"t":0.5,"note":"started"}', '{"t":1,"hop":"editor->bridge","message":{}}', "[1,2]"];
      const run = cli("trace", file("array.jsonl", `${lines.join("\n")}\n`));
      assert.equal(run.status, 65);
      assertClear(run.stderr, /line 3 is not a trace entry: not a JSON object/);
      const hop = cli("trace", file("hop.jsonl", '{"t":1,"hop":"sideways"}\n'));
      assert.equal(hop.status, 65);
      assertClear(hop.stderr, /unknown hop "sideways"/);
    });

    it("a valid trace renders (the same file the errors above are measured against)", () => {
      const trace = file("ok.jsonl", '{"t":0.5,"note":"started"}\n{"t":1,"hop":"editor->bridge","message":{"jsonrpc":"2.0","id":1,"method":"initialize"}}\n');
      const run = cli("trace", trace);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /initialize #1/);
      const mermaid = cli("trace", trace, "--mermaid");
      assert.equal(mermaid.status, 0);
      assert.match(mermaid.stdout, /^sequenceDiagram/);
    });

    it("no file, two files, an unknown flag: 2 with usage", () => {
      for (const args of [["trace"], ["trace", "a.jsonl", "b.jsonl"], ["trace", "a.jsonl", "--bogus"]]) {
        const run = cli(...args);
        assert.equal(run.status, 2, args.join(" "));
        assertClear(run.stderr, /acp-cancel: .*\nRun 'acp-cancel trace --help' for usage/);
      }
    });
  });

  describe("acp-cancel bridge", () => {
    const bad: [string[], RegExp][] = [
      [["bridge"], /missing the agent command/],
      [["bridge", "node"], /the agent command goes after '--'/],
      [["bridge", "--"], /missing the agent command/],
      [["bridge", "--", ""], /the agent command after '--' is empty/],
      [["bridge", "--grace-ms", "soon", "--", "cat"], /--grace-ms takes a whole number of milliseconds, got 'soon'/],
      [["bridge", "--grace-ms=-5", "--", "cat"], /--grace-ms takes a whole number/],
      [["bridge", "--max-line-bytes", "0", "--", "cat"], /--max-line-bytes takes a positive number/],
      [["bridge", "--timeout", "session/prompt", "--", "cat"], /--timeout takes METHOD=SECONDS/],
      [["bridge", "--timeout", "session/prompt=-1", "--", "cat"], /--timeout takes METHOD=SECONDS/],
      [["bridge", "--emulate", "everyone", "--", "cat"], /--emulate takes editor, agent or both/],
      [["bridge", "--log-level", "loud", "--", "cat"], /--log-level takes one of/],
      [["bridge", "--cleanup-method", "$/cancel_request", "--", "cat"], /--cleanup-method takes a method name/],
      [["bridge", "--bogus", "--", "cat"], /unknown option '--bogus'/],
      [["bridge", "stray", "--", "cat"], /unexpected argument 'stray'/],
      [["frobnicate"], /unknown command 'frobnicate'/],
    ];
    for (const [args, message] of bad) {
      it(`${args.join(" ") || "(nothing)"}: 2, ${message.source}`, () => {
        const run = cli(...args);
        assert.equal(run.status, 2);
        assertClear(run.stderr, message);
      });
    }

    it("an agent command that is a directory: 126, saying so", () => {
      const run = cli("bridge", "--", dir);
      assert.equal(run.status, 126);
      assertClear(run.stderr, new RegExp(`agent command is a directory: ${dir}`));
    });

    it("--trace or --log-file that cannot be written: 73 before any agent starts", () => {
      const marker = join(dir, "agent-ran");
      const agent = ["--", process.execPath, "-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`];
      for (const [flag, target, why] of [
        ["--trace", join(dir, "no", "such", "t.jsonl"), "no such file or directory"],
        ["--trace", dir, "is a directory"],
        ["--log-file", join(dir, "no", "x.log"), "no such file or directory"],
      ] as const) {
        const run = cli("bridge", flag, target, ...agent);
        assert.equal(run.status, 73, `${flag} ${target}: ${run.stderr}`);
        assertClear(run.stderr, new RegExp(`${flag}: cannot write '${target}': ${why}`));
      }
      assert.equal(existsSync(marker), false, "the agent never started");
      assert.equal(cli("bridge", ...agent).status, 0, "the same agent runs when the flags are fine");
      assert.equal(existsSync(marker), true);
      assert.equal(cli("bridge", "--log-file", join(dir, "ok.log"), ...agent).status, 0);
    });
  });
});
