import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parseGuardianRules, RulesError } from "../a2a/guardian-rules.js";
import { startGuardian } from "../a2a/reference-guardian.js";
import { HELP } from "./help.js";
import { UsageError } from "./parse-bridge-args.js";

/** Exit statuses of `acp-cancel guardian` beyond 0, 1 and 2 (sysexits.h). */
export const GuardianExit = {
  /** The rules file is not valid rules. */
  invalidRules: 65,
  /** The rules file is missing or unreadable. */
  unreadableRules: 66,
  /** The port cannot be listened on (in use, not permitted). */
  cannotListen: 69,
} as const;

export interface GuardianArgs {
  rulesFile: string;
  port: number;
  host: string;
}

/** Parses `acp-cancel guardian --rules FILE --port N [--host H]`. */
export function parseGuardianArgs(argv: readonly string[]): GuardianArgs {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: { rules: { type: "string" }, port: { type: "string" }, host: { type: "string" } },
  });
  if (positionals.length > 0) throw new UsageError(`guardian: unexpected argument '${positionals[0]}'`);
  if (values.rules === undefined || values.rules === "") throw new UsageError("guardian needs --rules FILE");
  if (values.port === undefined) throw new UsageError("guardian needs --port N (0 picks a free port)");
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65_535) {
    throw new UsageError(`--port takes a port number from 0 to 65535, got '${values.port}'`);
  }
  const host = values.host ?? "127.0.0.1";
  if (host === "") throw new UsageError("--host needs an address");
  return { rulesFile: values.rules, port, host };
}

/**
 * Runs the reference guardian until SIGINT or SIGTERM: every decision is a JSON line on stdout,
 * the listening address and problems go to stderr.
 */
export async function runGuardianCommand(argv: readonly string[]): Promise<number> {
  if (argv[0] === "--help") {
    process.stdout.write(HELP);
    return 0;
  }
  const args = parseGuardianArgs(argv);
  const fail = (status: number, message: string) => {
    process.stderr.write(`acp-cancel guardian: ${message}\n`);
    return status;
  };
  let text: string;
  try {
    text = readFileSync(args.rulesFile, "utf8");
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return fail(GuardianExit.unreadableRules, `cannot read the rules file '${args.rulesFile}': ${code ?? message}`);
  }
  let rules;
  try {
    rules = parseGuardianRules(text);
  } catch (error) {
    if (!(error instanceof RulesError)) throw error;
    return fail(GuardianExit.invalidRules, `${args.rulesFile}: ${error.message}`);
  }
  let guardian;
  try {
    guardian = await startGuardian({
      rules,
      port: args.port,
      host: args.host,
      log: (entry) => process.stdout.write(`${JSON.stringify(entry)}\n`),
    });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return fail(GuardianExit.cannotListen, `cannot listen on ${args.host}:${args.port}: ${code ?? message}`);
  }
  process.stderr.write(
    `acp-cancel guardian: listening on ${guardian.url} (${rules.rules.length} rules, default ${rules.default})\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await guardian.close();
  return 0;
}
