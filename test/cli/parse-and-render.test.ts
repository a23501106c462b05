/**
 * The CLI's input checks in process: argument parsing, input and output files, and the trace
 * reader and renderers. test/cli/input-errors.test.ts (npm run test:process) runs the same
 * mistakes through the real process and checks the exit statuses; this file checks each mistake's
 * message and status where they are decided, at no process's cost.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExitCode } from "../../src/bridge/exit-codes.js";
import { describeFileError } from "../../src/bridge/private-file.js";
import { checkOutputFile, CliInputError, readInputFile } from "../../src/cli/cli-error.js";
import { parseGuardianArgs } from "../../src/cli/guardian-command.js";
import { parseBridgeArgs, UsageError } from "../../src/bridge/bridge-options.js";
import { parseTrace, renderMermaid, renderTimeline, TraceFormatError } from "../../src/cli/render-trace.js";

/** The error `fn` throws: a UsageError, or node's own parseArgs error for an unknown flag. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof Error);
    return error;
  }
  assert.fail("expected an error");
}

describe("CLI input checks, in process: each mistake named where it is decided", () => {
  describe("acp-cancel bridge arguments", () => {
    const bad: [string[], RegExp][] = [
      [[], /missing the agent command/],
      [["--"], /missing the agent command/],
      [["--", ""], /the agent command after '--' is empty/],
      [["--grace-ms", "soon", "--", "cat"], /--grace-ms takes a whole number of milliseconds, got 'soon'/],
      [["--grace-ms=-5", "--", "cat"], /--grace-ms takes a whole number/],
      [["--grace-ms", "1.5", "--", "cat"], /--grace-ms takes a whole number/],
      [["--max-line-bytes", "0", "--", "cat"], /--max-line-bytes takes a positive number/],
      [["--timeout", "session/prompt", "--", "cat"], /--timeout takes METHOD=SECONDS/],
      [["--timeout", "session/prompt=-1", "--", "cat"], /--timeout takes METHOD=SECONDS/],
      [["--timeout", "=5", "--", "cat"], /--timeout takes METHOD=SECONDS/],
      [["--emulate", "everyone", "--", "cat"], /--emulate takes editor, agent or both/],
      [["--assume-support", "nobody", "--", "cat"], /--assume-support takes editor, agent or both/],
      [["--log-level", "loud", "--", "cat"], /--log-level takes one of/],
      [["--on-stuck", "panic", "--", "cat"], /--on-stuck takes one of/],
      [["--cleanup-method", "$/cancel_request", "--", "cat"], /--cleanup-method takes a method name/],
      [["--cleanup-method", "a b", "--", "cat"], /--cleanup-method takes a method name/],
      [["stray", "--", "cat"], /unexpected argument 'stray'/],
      // A timer holds at most 2^31 - 1 ms: a longer one would fire at once (or spin).
      [["--timeout", "initialize=1e9", "--", "cat"], /--timeout takes at most 2147483 seconds, got 'initialize=1e9'/],
      [["--timeout", "initialize=2147484", "--", "cat"], /--timeout takes at most 2147483 seconds/],
      [["--timeout", "initialize=0.0004", "--", "cat"], /--timeout takes at least 0\.001 seconds \(1 ms\)/],
      [["--grace-ms", "1e12", "--", "cat"], /--grace-ms takes at most 2147483647 milliseconds, got '1e12'/],
      [["--grace-ms", "2147483648", "--", "cat"], /--grace-ms takes at most 2147483647 milliseconds/],
      [["--exit-grace-ms", "9999999999", "--", "cat"], /--exit-grace-ms takes at most 2147483647/],
      [["--kill-grace-ms", "9999999999", "--", "cat"], /--kill-grace-ms takes at most 2147483647/],
      [["--turn-end-window-ms", "9999999999", "--", "cat"], /--turn-end-window-ms takes at most 2147483647/],
      [["--max-line-bytes", "x", "--", "cat"], /--max-line-bytes takes a whole number of bytes/],
    ];
    for (const [args, message] of bad) {
      it(`${args.join(" ") || "(nothing)"}: a usage error, ${message.source}`, () => {
        const error = thrown(() => parseBridgeArgs(args));
        assert.ok(error instanceof UsageError, `${error.name}: ${error.message}`);
        assert.match(error.message, message);
      });
    }

    it("an unknown flag: node's parseArgs error, which main() reports as usage (exit 2)", () => {
      const error = thrown(() => parseBridgeArgs(["--bogus", "--", "cat"])) as Error & { code?: string };
      assert.match(error.message, /Unknown option '--bogus'/);
      assert.match(error.code ?? "", /^ERR_PARSE_ARGS/);
    });

    it("the longest durations a timer holds are accepted", () => {
      const options = parseBridgeArgs(["--grace-ms", "2147483647", "--timeout", "session/prompt=2147483", "--", "cat"]);
      assert.equal(options.graceMs, 2147483647);
      assert.deepEqual(options.deadlines, { "session/prompt": 2147483000 });
      assert.deepEqual(parseBridgeArgs(["--timeout", "x=0.001", "--", "cat"]).deadlines, { x: 1 });
    });

    it("a bad flag is named even when '--' is missing (--help=1, -hv), not 'missing the agent command'", () => {
      for (const [args, flag] of [[["--help=1"], "--help"], [["-hv"], "-h"], [["--bogus"], "--bogus"]] as const) {
        const error = thrown(() => parseBridgeArgs(args)) as Error & { code?: string };
        assert.match(error.message, new RegExp(`Unknown option '${flag}'`));
        assert.match(error.code ?? "", /^ERR_PARSE_ARGS/);
      }
      assert.match(thrown(() => parseBridgeArgs(["--grace-ms", "5"])).message, /missing the agent command/);
    });

    it("every flag reaches the options; what follows '--' is the agent's, untouched", () => {
      const options = parseBridgeArgs([
        "--grace-ms", "250", "--timeout", "session/prompt=1.5", "--timeout", "fs/read_text_file=2",
        "--cleanup-method", "_acme/stop", "--max-line-bytes", "4096", "--emulate", "agent",
        "--assume-support", "editor", "--exit-grace-ms", "10", "--kill-grace-ms", "20",
        "--turn-end-window-ms", "30", "--on-stuck", "kill-tools", "--trace", "t.jsonl", "--log-level", "debug",
        "--log-file", "b.log", "--", "my-agent", "--grace-ms", "x", "--",
      ]);
      assert.deepEqual(options, {
        command: "my-agent",
        args: ["--grace-ms", "x", "--"],
        deadlines: { "session/prompt": 1500, "fs/read_text_file": 2000 },
        editorSupport: "yes",
        agentSupport: "no",
        logLevel: "debug",
        graceMs: 250,
        maxLineBytes: 4096,
        exitGraceMs: 10,
        killGraceMs: 20,
        cleanupMethods: ["_acme/stop"],
        turnEndWindowMs: 30,
        onStuck: "kill-tools",
        trace: "t.jsonl",
        logFile: "b.log",
      });
    });

    it("no flags: support decided at initialize, log level warn, nothing else set", () => {
      assert.deepEqual(parseBridgeArgs(["--", "agent"]), {
        command: "agent",
        args: [],
        deadlines: {},
        editorSupport: "auto",
        agentSupport: "auto",
        logLevel: "warn",
      });
    });

    it("--emulate both wins over --assume-support both", () => {
      const options = parseBridgeArgs(["--emulate", "both", "--assume-support", "both", "--", "agent"]);
      assert.equal(options.editorSupport, "no");
      assert.equal(options.agentSupport, "no");
    });
  });

  describe("acp-cancel guardian arguments", () => {
    const bad: [string[], RegExp][] = [
      [["--port", "0"], /guardian needs --rules FILE/],
      [["--rules", "", "--port", "0"], /guardian needs --rules FILE/],
      [["--rules", "r.json"], /guardian needs --port N/],
      [["--rules", "r.json", "--port", "70000"], /--port takes a port number from 0 to 65535, got '70000'/],
      [["--rules", "r.json", "--port=-1"], /--port takes a port number from 0 to 65535, got '-1'/],
      [["--rules", "r.json", "--port", "0", "--host", ""], /--host needs an address/],
      [["extra", "--rules", "r.json", "--port", "0"], /guardian: unexpected argument 'extra'/],
    ];
    for (const [args, message] of bad) {
      it(`${args.join(" ")}: a usage error, ${message.source}`, () => {
        const error = thrown(() => parseGuardianArgs(args));
        assert.ok(error instanceof UsageError, `${error.name}: ${error.message}`);
        assert.match(error.message, message);
      });
    }

    it("the host defaults to loopback", () => {
      assert.deepEqual(parseGuardianArgs(["--rules", "r.json", "--port", "8080"]), {
        rulesFile: "r.json",
        port: 8080,
        host: "127.0.0.1",
        allowUnauthenticated: false,
      });
    });
  });

  describe("input and output files", () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), "acp-cancel-cli-inproc-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    const cliError = (fn: () => unknown) => {
      const error = thrown(fn);
      assert.ok(error instanceof CliInputError, `${error.name}: ${error.message}`);
      return error;
    };

    it("a missing input file: 66, naming the file and why", () => {
      const missing = join(dir, "missing.jsonl");
      const error = cliError(() => readInputFile("trace", missing));
      assert.equal(error.exitCode, ExitCode.noInput);
      assert.equal(error.message, `cannot read trace '${missing}': no such file or directory`);
    });

    it("a directory as input: 66, 'is a directory'", () => {
      const error = cliError(() => readInputFile("trace", dir));
      assert.equal(error.exitCode, ExitCode.noInput);
      assert.match(error.message, /is a directory$/);
    });

    it("an output file in a missing folder, or a folder: 73, naming the flag", () => {
      const inMissing = join(dir, "no", "such", "t.jsonl");
      const missing = cliError(() => checkOutputFile("--trace", inMissing));
      assert.equal(missing.exitCode, ExitCode.cannotCreate);
      assert.equal(missing.message, `--trace: cannot write '${inMissing}': no such file or directory`);
      const folder = cliError(() => checkOutputFile("--log-file", dir));
      assert.equal(folder.exitCode, ExitCode.cannotCreate);
      assert.match(folder.message, /^--log-file: cannot write .*: is a directory$/);
    });

    it("an output file that can be written is created, and an input file read back", () => {
      const file = join(dir, "out.log");
      checkOutputFile("--log-file", file);
      assert.equal(readInputFile("log", file), "");
      mkdirSync(join(dir, "sub"));
      writeFileSync(join(dir, "sub", "x"), "text");
      assert.equal(readInputFile("x", join(dir, "sub", "x")), "text");
    });

    it("file errors people meet read as words; anything else keeps its own message", () => {
      const errno = (code: string) => Object.assign(new Error(code), { code });
      assert.equal(describeFileError(errno("ENOTDIR")), "a part of the path is not a directory");
      assert.equal(describeFileError(errno("EACCES")), "permission denied");
      assert.equal(describeFileError(errno("EPERM")), "permission denied");
      assert.equal(describeFileError(new Error("disk on fire")), "disk on fire");
      assert.equal(describeFileError("odd"), "odd");
    });
  });

  describe("acp-cancel trace: reading and rendering", () => {
    const formatError = (text: string) => {
      const error = thrown(() => parseTrace(text));
      assert.ok(error instanceof TraceFormatError, `${error.name}: ${error.message}`);
      return error.message;
    };

    it("a file that is not JSONL names the line", () => {
      assert.match(formatError('{\n  "t": 1\n}\n'), /^line 1 is not JSON/);
    });

    it("JSON lines that are not trace entries name the first bad line and what is wrong", () => {
      const lines = ['{"t":0.5,"note":"started"}', '{"t":1,"hop":"editor->bridge","message":{}}', "[1,2]"];
      assert.equal(formatError(lines.join("\n")), "line 3 is not a trace entry: not a JSON object");
      assert.equal(formatError('{"t":1,"hop":"sideways"}'), 'line 1 is not a trace entry: unknown hop "sideways"');
      assert.equal(formatError('{"hop":"editor->bridge"}'), "line 1 is not a trace entry: no numeric 't' (time)");
      assert.equal(formatError('{"t":1}'), "line 1 is not a trace entry: neither a 'hop' nor a 'note'");
    });

    it("blank lines are skipped, and cross-protocol hops are trace entries too", () => {
      const entries = parseTrace('\n{"t":1,"hop":"agent->mcp-server","label":"tools/call"}\n\n');
      assert.equal(entries.length, 1);
    });

    it("a bridge trace renders as a timeline and as a mermaid sequence diagram", () => {
      const entries = parseTrace([
        '{"t":0.5,"note":"{\\"type\\":\\"started\\",\\"pid\\":7}"}',
        '{"t":1,"hop":"editor->bridge","message":{"jsonrpc":"2.0","id":1,"method":"initialize"}}',
        '{"t":2,"hop":"bridge->editor","message":{"jsonrpc":"2.0","id":1,"error":{"code":-32800}}}',
        '{"t":3,"hop":"bridge->agent","message":{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}}',
      ].join("\n"));
      const timeline = renderTimeline(entries).split("\n");
      assert.equal(timeline.length, 4);
      assert.match(timeline[0] ?? "", /0\.500 ms .*· started pid=7/);
      assert.match(timeline[1] ?? "", /editor → bridge {2}initialize #1$/);
      assert.match(timeline[2] ?? "", /answer #1 \(error -32800\)$/);
      assert.match(timeline[3] ?? "", /\$\/cancel_request for #1$/);
      const mermaid = renderMermaid(entries).split("\n");
      assert.equal(mermaid[0], "sequenceDiagram");
      assert.ok(mermaid.includes("  E->>B: initialize #1 (1.0 ms)"), mermaid.join("\n"));
      assert.ok(mermaid.includes("  Note over B: started pid=7"), mermaid.join("\n"));
    });

    it("a cross-protocol trace gets one participant per party, in order of appearance", () => {
      const entries = parseTrace([
        '{"t":1,"hop":"editor->agent","protocol":"acp","label":"session/cancel"}',
        '{"t":2,"hop":"agent->mcp-server","protocol":"mcp","label":"notifications/cancelled; #4"}',
      ].join("\n"));
      assert.deepEqual(renderMermaid(entries).split("\n"), [
        "sequenceDiagram",
        "  participant P0 as editor",
        "  participant P1 as agent",
        "  participant P2 as mcp-server",
        "  P0->>P1: [acp] session/cancel (1.0 ms)",
        "  P1->>P2: [mcp] notifications/cancelled, 4 (2.0 ms)",
      ]);
    });
  });
});
