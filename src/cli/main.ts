#!/usr/bin/env node
import { parseArgs } from "node:util";
import { ExitCode } from "../bridge/exit-codes.js";
import { checkOutputFile, CliInputError, readInputFile } from "./cli-error.js";
import { escapeControl } from "../wire/index.js";
import { COMMAND_HELP, HELP, packageVersion } from "./help.js";
import { parseArgsMessage } from "./parse-args-message.js";
import { parseBridgeArgs, UsageError } from "../bridge/bridge-options.js";
import { parseTrace, renderMermaid, renderTimeline, TraceFormatError } from "./render-trace.js";

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `help bridge`, or `bridge --help` among the command's own arguments (after a `--` they are the agent's).
  const commandHelp = COMMAND_HELP.get((command === "help" ? rest[0] : command) ?? "");
  const own = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (command === "help" && rest[0] !== undefined && commandHelp === undefined)
    throw new UsageError(`no help on '${rest[0]}': the commands are ${[...COMMAND_HELP.keys()].join(", ")}`);
  if (commandHelp !== undefined && (command === "help" || own.includes("--help") || own.includes("-h"))) {
    process.stdout.write(commandHelp);
    return ExitCode.ok;
  }
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return command === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (command === "--version" || command === "-v") {
    process.stdout.write(`${packageVersion()}\n`);
    return ExitCode.ok;
  }
  if (command === "bridge") {
    const options = parseBridgeArgs(rest);
    // Output files are checked before the agent starts, so a typo costs no agent run.
    if (options.trace !== undefined) checkOutputFile("--trace", options.trace);
    if (options.logFile !== undefined) checkOutputFile("--log-file", options.logFile);
    return (await import("../bridge/bridge.js")).runBridge(options);
  }
  // Each command loads its own code when it runs: help and usage errors answer without loading all three.
  if (command === "guardian") return (await import("./guardian-command.js")).runGuardianCommand(rest);
  if (command === "check") return (await import("./check-command.js")).runCheckCommand(rest);
  if (command === "trace") {
    const options = { mermaid: { type: "boolean" } } as const;
    const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, strict: true, options });
    const [file, extra] = positionals;
    if (file === undefined) throw new UsageError("trace needs a file: acp-cancel trace <trace.jsonl> [--mermaid]");
    if (extra !== undefined) throw new UsageError(`trace takes one file, got also '${extra}'`);
    const text = readInputFile("trace", file);
    let entries;
    try {
      entries = parseTrace(text);
    } catch (error) {
      if (!(error instanceof TraceFormatError)) throw error;
      throw new CliInputError(`'${file}' is not a trace written by --trace (JSONL): ${error.message}`, ExitCode.dataError);
    }
    process.stdout.write(`${values.mermaid === true ? renderMermaid(entries) : renderTimeline(entries)}\n`);
    return ExitCode.ok;
  }
  throw new UsageError(`unknown command '${command}'`);
}

/** Prints what went wrong, as one line (a usage error points at the command's help); the exit status for it. */
function failed(error: unknown): number {
  if (error instanceof CliInputError) {
    process.stderr.write(`acp-cancel: ${escapeControl(error.message)}\n`);
    return error.exitCode;
  }
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    const command = process.argv[2];
    const topic = command !== undefined && COMMAND_HELP.has(command) ? `${command} ` : "";
    const message = error instanceof UsageError ? error.message : parseArgsMessage(error as Error, command);
    process.stderr.write(`acp-cancel: ${escapeControl(message)}\nRun 'acp-cancel ${topic}--help' for usage.\n`);
    return ExitCode.usage;
  }
  // `check` exits 1 when a cell fails, so its own unexpected failure gets 70.
  const check = process.argv[2] === "check";
  const what = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`acp-cancel: ${check ? "check failed unexpectedly: " : ""}${what}\n`);
  return check ? ExitCode.software : ExitCode.internal;
}

process.exitCode = await main(process.argv.slice(2)).catch(failed);
// stdin may still be open (the editor's end); nothing else is left to do.
process.stdin.destroy();
