/**
 * What the real-agent cells share: open a cell (the scripted model, a fresh HOME from the agent's
 * recipe, a driver in one placement), find the processes of a tool by its command line, and the
 * bridge's agent-side lines. The recipes themselves ship in src/check (acp-cancel check uses them).
 */
import { readFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { agentRecipe, type AgentRecipe, type ModelServer, type Script, startModelServer, writeRecipeFiles } from "../../src/check/index.js";
import { type Driver, embeddedDriver, type Handshake, wireDriver } from "./drivers.js";
import { type Message, processesWith, type WireClient } from "./harness.js";
import type { RealAgent } from "./peers.js";

export const BRIDGE_ARGS = ["--exit-grace-ms", "500", "--kill-grace-ms", "500"];
export type RealPlacement = "direct" | "bridge" | "embedded";

export interface RealCell {
  driver: Driver;
  model: ModelServer;
  marker: string;
  home: string;
  sessionId: string;
  recipe: AgentRecipe;
}

export interface CellOptions {
  script?: Script;
  /** The agent asks before a shell command (a permission dialog opens). */
  ask?: boolean;
  /** Reuse this HOME (and model): a second process of the same agent, for session/load. */
  reuse?: { home: string; model: ModelServer; marker: string };
  bridgeArgs?: string[];
}

export function handshakeOf(recipe: AgentRecipe): Handshake {
  return { authenticate: recipe.authenticate, sessionSetup: (sessionId) => recipe.sessionSetup(sessionId) };
}

/** Starts the model (or reuses one) and writes the agent's recipe into HOME: what its process needs. */
export async function prepareCell(agent: RealAgent, options: CellOptions = {}) {
  const model = options.reuse?.model ?? (await startModelServer({ script: options.script }));
  if (options.script !== undefined) model.script = options.script;
  const home = options.reuse?.home ?? mkdtempSync(join(tmpdir(), "acp-interop-"));
  const marker = options.reuse?.marker ?? randomUUID();
  const recipe = agentRecipe(agent.recipe, model.url, home, { ask: options.ask, extraEnv: { ACP_INTEROP_MARKER: marker } });
  writeRecipeFiles(recipe);
  const command = { command: agent.agent.command, args: [...agent.agent.args, ...recipe.acpArgs] };
  return { model, home, marker, recipe, command, env: recipe.env as NodeJS.ProcessEnv };
}

/** prepareCell, then the driver in `placement`; no session yet. */
export async function startCell(agent: RealAgent, placement: RealPlacement, options: CellOptions = {}) {
  const { model, home, marker, recipe, command, env } = await prepareCell(agent, options);
  const driver = placement === "embedded"
    ? embeddedDriver(command, env, home)
    : wireDriver(placement, command, env, home, [...BRIDGE_ARGS, ...(options.bridgeArgs ?? [])]);
  return { driver, model, marker, home, recipe };
}

export async function openCell(agent: RealAgent, placement: RealPlacement, options: CellOptions = {}): Promise<RealCell> {
  const started = await startCell(agent, placement, options);
  const sessionId = await started.driver.open(handshakeOf(started.recipe), started.home);
  return { ...started, sessionId };
}

/** Live processes of the cell whose command line contains `text`. */
export function processesRunning(marker: string, text: string): number[] {
  return processesWith(marker).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").includes(text);
    } catch {
      return false;
    }
  });
}

export const stopReasonOf = (answer: Message | undefined) => (answer?.result as { stopReason?: unknown } | undefined)?.stopReason;

/** The bridge's lines to (or from) the agent, from its trace. */
export function agentSide(wire: WireClient, hop: "bridge->agent" | "agent->bridge"): Message[] {
  return wire.trace().filter((e) => e.hop === hop && e.message !== undefined).map((e) => e.message as Message);
}

/** Allows every dialog the agent opens (the shell cells: the tool must really run). */
export function allowDialogs(driver: Driver): void {
  driver.onDialog = (dialog) => {
    const options = (dialog.params.options ?? []) as { optionId: string; kind: string }[];
    const allow = options.find((o) => o.kind === "allow_once") ?? options.find((o) => o.kind.startsWith("allow")) ?? options[0];
    if (allow !== undefined) dialog.answer({ outcome: "selected", optionId: allow.optionId });
  };
}
