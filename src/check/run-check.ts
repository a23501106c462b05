/**
 * `acp-cancel check`: every scenario in both placements, each cell a fresh run of the agent. When the
 * first cell cannot open a session, nothing else runs and AgentUnusableError says why.
 */
import { AgentUnusableError, type OpenedSession } from "./open-session.js";
import { type CellContext, runCell } from "./run-cell.js";
import { needsScriptedModel, SCENARIOS } from "./scenarios.js";
import { type Cell, PLACEMENTS, type Placement, type Scorecard } from "./scorecard.js";

export interface CheckOptions extends Omit<CellContext, "opened"> {
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
  const context = { ...options, opened: (session: OpenedSession) => (first ??= session) };
  const cells: Cell[] = [];
  for (const scenario of chosen) {
    const reason = model.scripted ? undefined : needsScriptedModel(scenario);
    if (reason !== undefined) {
      leftOut.push({ scenario: scenario.name, reason });
      continue;
    }
    for (const placement of options.placements ?? PLACEMENTS) {
      const cell = await runCell(scenario, placement, context).catch((error: unknown) => {
        // Before any session opened the agent is unusable; after, one run that did not start is that cell's failure.
        if (!(error instanceof AgentUnusableError) || first === undefined) throw error;
        return { scenario: scenario.name, placement, verdict: "fail", stopToAnswerMs: null, outcome: "not started", leftRunning: [], note: error.message } as const;
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
