/**
 * Where the model comes from in a check: the agent's own (only the cells a plain text turn can show run),
 * or with --model-server a scripted loopback model that makes every turn do what a cell needs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentCommand } from "./agent-run.js";

export type ModelScript = "hold" | "shell" | "permission" | "finish";

/** How one cell starts the agent, and what it sends around `session/new`. */
export interface Launch {
  /** A recipe may add flags (e.g. to run tools unasked) and seal the environment (a fresh HOME, fake keys). */
  readonly agent: AgentCommand;
  readonly env: NodeJS.ProcessEnv;
  /** Where its sessions open. */
  readonly cwd: string;
  readonly authenticate?: Record<string, unknown> | undefined;
  /** Requests the agent needs after `session/new` (a mode without an approval classifier, say). */
  readonly sessionSetup?: ((sessionId: string) => { method: string; params: Record<string, unknown> }[]) | undefined;
}

/** What the model will do with the next turn: the prompt to send, and what its tool writes, and when, unless stopped first. */
export interface Scripted {
  readonly text: string;
  readonly sideEffect?: { readonly file: string; readonly delayMs: number } | undefined;
}

export interface ModelSource {
  /** Whether turns can be scripted (the tool, dialog and next-prompt cells need it). */
  readonly scripted: boolean;
  /** How to start the agent for a cell whose turn is scripted `script`. */
  launch(script: ModelScript, agent: AgentCommand): Launch;
  script(script: ModelScript): Scripted;
  /** How many of the model's turn requests the agent still holds open. */
  openRequests(): number;
  stop(): Promise<void>;
}

/** The default source: the agent's own model, a text prompt that takes a while to answer, in a folder of its own. */
export function ownModel(prompt: string): ModelSource {
  const cwd = mkdtempSync(join(tmpdir(), "acp-cancel-check-"));
  return {
    scripted: false,
    launch: (_script, agent) => ({ agent, env: process.env, cwd }),
    script: () => ({ text: prompt }),
    openRequests: () => 0,
    stop: async () => rmSync(cwd, { recursive: true, force: true }),
  };
}

/** The default prompt: a turn long enough to press Stop in, whatever the model. */
export const DEFAULT_PROMPT = "Count from 1 to 300, one number per line, and write nothing else.";
