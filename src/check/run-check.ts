/**
 * `acp-cancel check`: every scenario in both placements, each cell a fresh run of the agent. When the first cell
 * cannot open a session, nothing else runs and AgentUnusableError says why.
 */
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { performance } from "node:perf_hooks";
import { type ProcessEntry, turnsWork, uptimeTicks } from "../os/index.js";
import { isToolCallUpdate } from "../wire/acp-shapes.js";
import { type AgentCommand, AgentRun, AgentUnusableError, commandLine, describeProcess, type OpenedSession, sameProcess } from "./agent-run.js";
import type { ModelSource, Scripted } from "./model.js";
import { inForce, type Scenario, SCENARIOS, sessionCancel } from "./scenarios.js";
import { type Cell, PLACEMENTS, type Placement, type Scorecard } from "./scorecard.js";
import { judge, type Observation, unjudged } from "./verdict.js";

export interface CellLimits {
  /** For each of initialize, authenticate, session/new, and the first turn (opencode's takes 9 s under load). */
  readonly startMs: number;
  /** Longest wait from Stop to the answer (or the exit), then for what the turn started to go (the suite's 15 s each). */
  readonly stopMs: number;
}

export interface CheckOptions {
  readonly agent: AgentCommand;
  readonly model: ModelSource;
  readonly limits: CellLimits;
  readonly bridgeArgs: readonly string[];
  /** The ACP version to ask for at `initialize`; the agent's answer is the one in force. */
  readonly protocol: 1 | 2;
  readonly placements?: readonly Placement[];
  /** Only the scenarios with these names (all when undefined). */
  readonly only?: readonly string[];
  /** This package's version, for the scorecard. */
  readonly version: string;
  readonly onCell?: (cell: Cell) => void;
}

export const SCENARIO_NAMES: readonly string[] = SCENARIOS.map((scenario) => scenario.name);

export async function runCheck(options: CheckOptions): Promise<Scorecard> {
  const { model } = options;
  const chosen = SCENARIOS.filter((scenario) => options.only === undefined || options.only.includes(scenario.name));
  const leftOut: { scenario: string; reason: string }[] = [];
  let first: OpenedSession | undefined;
  const cells: Cell[] = [];
  for (const scenario of chosen) {
    if (!model.scripted && scenario.scriptedFor !== undefined) {
      leftOut.push({ scenario: scenario.name, reason: `needs --model-server (${scenario.scriptedFor})` });
      continue;
    }
    for (const placement of options.placements ?? PLACEMENTS) {
      const cell = await runCell(scenario, placement, options, (session) => (first ??= session)).catch((error: unknown) => {
        // Before any session opened the agent is unusable; after, one run that did not start is that cell's failure.
        if (!(error instanceof AgentUnusableError) || first === undefined) throw error;
        return unjudged(scenario.name, placement, "fail", "not started", error.message);
      });
      cells.push(cell);
      options.onCell?.(cell);
    }
  }
  return {
    tool: "acp-cancel check",
    version: options.version,
    agent: { command: [options.agent.command, ...options.agent.args], ...agentInfo(first) },
    modelServer: model.scripted,
    leftOut,
    cells,
  };
}

function agentInfo(session: OpenedSession | undefined): Partial<Scorecard["agent"]> {
  type Info = { name?: unknown; title?: unknown; version?: unknown };
  const init = session?.initialize as { protocolVersion?: unknown; agentInfo?: Info; info?: Info } | undefined;
  const info = init?.agentInfo ?? init?.info; // v2 calls it info
  const name = info?.name ?? info?.title;
  return {
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof info?.version === "string" ? { agentVersion: info.version } : {}),
    ...(typeof init?.protocolVersion === "number" ? { protocolVersion: init.protocolVersion } : {}),
  };
}

const POLL_MS = 20;
/** After the first answer, how long a second one is waited for. */
const REPEAT_WINDOW_MS = 200;
/** After a tool's delay, how long its file is given to appear before it counts as never written. */
const SIDE_EFFECT_MARGIN_MS = 500;
/** How long the tool runs before Stop: long enough for an agent to hand its first output to the model (codex-acp). */
const TOOL_RUNNING_MS = 1000;

/** Whether `check` held before `limitMs` passed. */
async function until(check: () => boolean, limitMs: number): Promise<boolean> {
  const end = performance.now() + limitMs;
  for (;;) {
    if (check()) return true;
    if (performance.now() >= end) return false;
    await sleep(POLL_MS);
  }
}

/** One cell; `opened` sees the session its run opened (the first names the agent in the scorecard). */
async function runCell(
  asked: Scenario, placement: Placement, context: CheckOptions, opened: (session: OpenedSession) => void,
): Promise<Cell> {
  const { model, limits } = context;
  const run = new AgentRun(placement, context.agent, model.recipe(asked.script), context.bridgeArgs);
  try {
    const session = await run.open(model.cwd, limits.startMs, context.protocol);
    opened(session);
    const scenario = inForce(asked, session.protocol);
    const ends = (id: number) => run.wire.turnEnds(id, session.protocol);
    const baseline = run.processes();
    const isNew = (entry: ProcessEntry) => !baseline.some((known) => sameProcess(known, entry));
    // The tool cell's user allows the tool when asked: it must really run before Stop.
    run.wire.allowDialogs = scenario.when === "tool";
    let toolSeenAt: number | undefined;
    let streamingAt: number | undefined;
    const promptAt = performance.now();
    const promptTick = uptimeTicks();
    const send = (text: string) => run.wire.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] });
    const { text, sideEffect } = model.script(scenario.script);
    let prompt: { id: number } = send(text);
    const answered = () => ends(prompt.id).length > 0;
    // What the turn left running, by the bridge's rule: its work, not the agent's housekeeping.
    let toolCallTick: number | undefined;
    let endTick: number | undefined;
    run.wire.onMessage = (message) => {
      if (toolCallTick === undefined && message.method === "session/update" && isToolCallUpdate(message.params)) toolCallTick = uptimeTicks();
      if (endTick === undefined && answered()) endTick = uptimeTicks();
    };
    const leftByTurn = () => {
      const all = run.processes();
      const root = run.child.pid ?? 0;
      // Behind the bridge, the agent is the bridge's child.
      const agent = placement === "direct" ? root : (all.find((entry) => entry.ppid === root)?.pid ?? 0);
      const work = turnsWork(all, agent, { from: promptTick, to: endTick, toolCall: toolCallTick });
      return all.filter((entry) => isNew(entry) && work(entry));
    };
    const ended = () => answered() || run.exit !== undefined;
    const underWay: Record<Scenario["when"], () => boolean> = {
      "at-once": () => true,
      // With the scripted model: progress once the model streams (an earlier update can precede the model's first byte).
      "under-way": () => {
        if (model.scripted && model.openRequests() > 0) streamingAt ??= performance.now();
        return run.wire.progressSince(model.scripted ? (streamingAt ?? Infinity) : promptAt) || run.wire.openDialogs.size > 0;
      },
      "dialog": () => run.wire.openDialogs.size > 0,
      // The tool: a new process running the scripted command (it names the file it would write), for a while.
      "tool": () => {
        if (run.processes().some((entry) => isNew(entry) && commandLine(entry.pid).includes(sideEffect?.file ?? "\0"))) toolSeenAt ??= performance.now();
        return toolSeenAt !== undefined && performance.now() - toolSeenAt >= TOOL_RUNNING_MS;
      },
    };
    await until(() => ended() || underWay[scenario.when](), limits.startMs);
    const early = ends(prompt.id)[0];
    const { name, accepted } = scenario;
    const base = { scenario: name, placement, judge: scenario.judge, accepted, limitMs: limits.stopMs };
    if (early !== undefined) return judge({ ...base, endedBeforeStop: early.outcome, answers: [], leftRunning: [] });
    if ((scenario.when === "tool" || scenario.when === "dialog") && !underWay[scenario.when]()) {
      const what = scenario.when === "tool" ? "no process ran the scripted tool" : "no permission dialog opened";
      return unjudged(name, placement, "skip", "", `${what} within ${limits.startMs} ms`);
    }
    let stopAt = performance.now();
    const judged = scenario.stop(run, session.sessionId, prompt.id);
    if (judged !== undefined) prompt = { id: judged };
    // Judged by the exit, what the run still runs is left running; judged by the answer, what the turn started.
    const left = scenario.judge === "exit" ? () => run.processes() : leftByTurn;
    let answers: Observation["answers"] = [];
    if (scenario.judge === "exit") {
      await until(() => run.exit !== undefined, limits.stopMs);
    } else {
      await until(ended, limits.stopMs);
      if (scenario.nextPrompt === true && answered()) {
        stopAt = performance.now();
        prompt = send(model.script("finish").text);
        await until(ended, limits.stopMs);
      }
      if (answered()) await sleep(REPEAT_WINDOW_MS);
      answers = ends(prompt.id).map((end) => ({ atMs: end.at - stopAt, outcome: end.outcome }));
      if (scenario.thenCancel === true) sessionCancel(run, session.sessionId);
    }
    await until(() => left().length === 0 && model.openRequests() === 0, limits.stopMs);
    const leftRunning = left().map(describeProcess);
    const exit = run.exit === undefined ? {} : { exit: { atMs: Math.max(0, run.exit.at - stopAt), outcome: run.exit.outcome } };
    return judge({ ...base, ...exit, answers, leftRunning, undone: await undone(model, sideEffect, stopAt) });
  } finally {
    await run.dispose();
  }
}

/**
 * What the scripted model shows was not stopped: its turn request still open, or the tool's file
 * written (looked for once the command's delay has passed since Stop).
 */
async function undone(model: ModelSource, sideEffect: Scripted["sideEffect"], stopAt: number): Promise<string[]> {
  const found: string[] = [];
  if (model.openRequests() > 0) found.push("the model request is still open");
  if (sideEffect !== undefined) {
    await sleep(Math.max(0, stopAt + sideEffect.delayMs + SIDE_EFFECT_MARGIN_MS - performance.now()));
    if (existsSync(sideEffect.file)) found.push("the tool's side effect happened after Stop");
  }
  return found;
}
