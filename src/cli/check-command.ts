/**
 * `acp-cancel check [options] -- <agent command>`: the Stop scorecard of an agent, directly and
 * through the bridge. The table goes to stdout, progress to stderr, JSON to --json FILE.
 */
import { openSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ExitCode } from "../bridge/exit-codes.js";
import { MAX_TIMER_MS } from "../core/timer-limit.js";
import { AGENT_NAMES, recognizeAgent } from "../check/agents.js";
import { DEFAULT_LIMITS } from "../check/default-limits.js";
import { DEFAULT_PROMPT, ownModel, scriptedModel } from "../check/model.js";
import { AgentUnusableError } from "../check/agent-run.js";
import { cellText, renderMarkdown, renderTable } from "../check/render.js";
import { runCheck, SCENARIO_NAMES } from "../check/run-check.js";
import { allHold, PLACEMENTS } from "../check/scorecard.js";
import { escapeControl } from "../wire/index.js";
import { checkOutputFile, CliInputError } from "./cli-error.js";
import { packageVersion } from "./help.js";
import { UsageError } from "../bridge/bridge-options.js";

const OPTIONS = {
  "model-server": { type: "boolean" },
  "json": { type: "string" },
  "markdown": { type: "boolean" },
  "prompt": { type: "string" },
  "only": { type: "string", multiple: true },
  "placement": { type: "string" },
  "stop-limit-ms": { type: "string" },
  "start-limit-ms": { type: "string" },
  "bridge-arg": { type: "string", multiple: true },
  "protocol": { type: "string" },
  "quiet": { type: "boolean" },
} as const;

function milliseconds(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0 || ms > MAX_TIMER_MS)
    throw new UsageError(`${flag} needs a whole number of ms from 1 to ${MAX_TIMER_MS}, got '${value}'`);
  return ms;
}

/** A flag that takes one of two words (`--protocol is v1 or v2, got '3'`). */
function either<T extends string>(flag: string, value: string | undefined, words: readonly T[]): T | undefined {
  if (value === undefined || words.includes(value as T)) return value as T | undefined;
  throw new UsageError(`${flag} is ${words.join(" or ")}, got '${value}'`);
}

export async function runCheckCommand(argv: readonly string[]): Promise<number> {
  const split = argv.indexOf("--");
  const own = split === -1 ? argv : argv.slice(0, split);
  const [command, ...args] = split === -1 ? [] : argv.slice(split + 1);
  const { values, positionals } = parseArgs({ args: [...own], options: OPTIONS, allowPositionals: true, strict: true });
  if (positionals.length > 0) throw new UsageError(`the agent command goes after '--': acp-cancel check [options] -- ${positionals.join(" ")}`);
  if (command === undefined || command === "") throw new UsageError("check needs the agent's command after '--': acp-cancel check -- my-agent --acp");
  const unknown = (values.only ?? []).filter((name) => !SCENARIO_NAMES.includes(name));
  if (unknown.length > 0) throw new UsageError(`--only: no scenario '${unknown[0]}' (one of: ${SCENARIO_NAMES.join(", ")})`);
  const placement = either("--placement", values.placement, PLACEMENTS);
  const limits = {
    ...DEFAULT_LIMITS,
    stopMs: milliseconds("--stop-limit-ms", values["stop-limit-ms"], DEFAULT_LIMITS.stopMs),
    startMs: milliseconds("--start-limit-ms", values["start-limit-ms"], DEFAULT_LIMITS.startMs),
  };
  const protocol = either("--protocol", values.protocol, ["v1", "v2"]) === "v2" ? 2 : 1;
  const known = recognizeAgent([command, ...args], protocol);
  if (values["model-server"] === true && known === undefined) {
    throw new UsageError(`--model-server has recipes for ${AGENT_NAMES.join(", ")}; '${command}' is none of them`);
  }
  const { json } = values;
  if (json !== undefined) checkOutputFile("--json", json, () => openSync(json, "w"));
  const model = known !== undefined && values["model-server"] === true ? await scriptedModel(known) : ownModel(values.prompt ?? DEFAULT_PROMPT);
  try {
    const card = await runCheck({
      agent: { command, args },
      model,
      limits,
      version: packageVersion(),
      ...(placement === undefined ? {} : { placements: [placement] }),
      ...(values.only === undefined ? {} : { only: values.only }),
      bridgeArgs: values["bridge-arg"] ?? [],
      protocol,
      onCell: (cell) => {
        if (values.quiet !== true) process.stderr.write(`${cell.scenario}, ${cell.placement}: ${cellText(cell)}\n`);
      },
    });
    if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(card, null, 2)}\n`);
    process.stdout.write(values.markdown === true ? renderMarkdown([card]) : renderTable(card));
    return allHold(card) ? ExitCode.ok : 1;
  } catch (error) {
    if (!(error instanceof AgentUnusableError)) throw error;
    const code = { "not-found": ExitCode.notFound, "not-executable": ExitCode.notExecutable, "unusable": ExitCode.unavailable }[error.reason];
    throw new CliInputError(escapeControl(error.message), code);
  } finally {
    await model.stop();
  }
}
