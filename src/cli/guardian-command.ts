import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { parseGuardianRules, RulesError } from "../a2a/guardian-rules.js";
import { type GuardianLogEntry, startGuardian } from "../a2a/reference-guardian.js";
import { missingPackagesMessage } from "../bridge/optional-packages.js";
import { UsageError } from "../bridge/bridge-options.js";

/** Exit statuses of `acp-cancel guardian` beyond 0, 1 and 2 (sysexits.h; 78, EX_CONFIG: the installation lacks a package). */
const GuardianExit = { invalidRules: 65, unreadableRules: 66, cannotListen: 69, missingPackage: 78 } as const;

/** Parses `acp-cancel guardian --rules FILE --port N [--host H] [--allow-unauthenticated] [--redis URL]`. */
export function parseGuardianArgs(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      "rules": { type: "string" },
      "port": { type: "string" },
      "host": { type: "string" },
      "allow-unauthenticated": { type: "boolean" },
      "redis": { type: "string" },
    },
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
  const redis = values.redis;
  if (redis !== undefined && !/^rediss?:\/\/./.test(redis)) throw new UsageError(`--redis takes a redis:// or rediss:// URL, got '${redis}'`);
  // Without --redis, the rate counts stay in this process's memory.
  const shared = redis === undefined ? {} : { redis };
  return { rulesFile: values.rules, port, host, allowUnauthenticated: values["allow-unauthenticated"] === true, ...shared };
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || /^::ffff:127\./.test(bare) || bare === "0:0:0:0:0:0:0:1";
  return false;
}

/** Runs the reference guardian until SIGINT or SIGTERM: decisions as JSON lines on stdout, the rest on stderr. */
export async function runGuardianCommand(argv: readonly string[]): Promise<number> {
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
  const missing = args.redis === undefined ? undefined : missingPackagesMessage(["redis"]);
  if (missing !== undefined) return fail(GuardianExit.missingPackage, `--redis ${missing}`);
  const hasToken = rules.token !== undefined || (rules.tokens?.length ?? 0) > 0;
  if (!hasToken && !isLoopbackHost(args.host) && !args.allowUnauthenticated) {
    return fail(
      2,
      `--host ${args.host} reaches beyond this machine, and the rules set no token, so anyone who reaches it ` +
      "could ask the guardian: set \"token\" or \"tokens\" in the rules, or pass --allow-unauthenticated",
    );
  }
  // The handlers go in before `listening on` is printed: whoever reads that line may signal at once.
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    // Replicas share their rate counts on Redis (loaded only then: `redis` is an optional peer).
    // A Redis that is down does not stop the start: each count then fails and is answered 503.
    const counter = args.redis === undefined ? undefined : await (await import("../replicas/index.js")).redisRateCounter(args.redis);
    let guardian;
    try {
      const log = (entry: GuardianLogEntry) => process.stdout.write(`${JSON.stringify(entry)}\n`);
      const shared = counter === undefined ? {} : { counter };
      guardian = await startGuardian({ rules, port: args.port, host: args.host, log, ...shared });
    } catch (error) {
      await counter?.close();
      const { code, message } = error as NodeJS.ErrnoException;
      return fail(GuardianExit.cannotListen, `cannot listen on ${args.host}:${args.port}: ${code ?? message}`);
    }
    process.stderr.write(
      `acp-cancel guardian: listening on ${guardian.url} (${rules.rules.length} rules, default ${rules.default})\n`,
    );
    await stopped;
    await guardian.close();
    await counter?.close();
    return 0;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
