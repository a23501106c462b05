/**
 * Where the model comes from in a check. Without --model-server it is whatever the agent is
 * configured with (the user's keys and settings), so only the cells that a plain text turn can
 * show run. With it, a scripted loopback model server and a recipe for the agent make every turn
 * do what a cell needs (hold, call a shell tool, ask permission, finish). The server and the
 * recipes plug in through this one interface.
 */
import type { AgentCommand } from "./agent-run.js";

/** What the model is to do with the next turn. */
export type ModelScript = "hold" | "shell" | "permission" | "finish";

/** The request function of a session's editor end, for a recipe's own set-up calls. */
export type Request = (method: string, params: unknown) => Promise<Record<string, unknown>>;

export interface ModelSource {
  /** Whether turns can be scripted (the tool, dialog and next-prompt cells need it). */
  readonly scripted: boolean;
  /** The directory sessions are opened in. */
  readonly cwd: string;
  /**
   * How to start the agent for a cell whose turn is scripted `script`: its command (a recipe may
   * add flags, e.g. to run tools unasked) and its environment (a scripted source seals it: a fresh
   * HOME, fake keys, base URLs on the loopback model).
   */
  runFor(script: ModelScript, agent: AgentCommand): { agent: AgentCommand; env: NodeJS.ProcessEnv };
  /** `authenticate`'s params to send before `session/new`, when the agent needs it. */
  readonly authenticate?: Record<string, unknown> | undefined;
  /** Calls the agent needs after `session/new` (a mode without an approval classifier, say). */
  afterSession?(request: Request, sessionId: string): Promise<void>;
  /** Makes the model do `script` with the next turn; the prompt text to send for it. */
  script(script: ModelScript): string;
  /** What the last shell or permission script's command writes, and when, unless it is stopped first. */
  readonly sideEffect?: { readonly file: string; readonly delayMs: number } | undefined;
  /** How many of the model's turn requests the agent still holds open. */
  openRequests(): number;
  stop(): Promise<void>;
}

/** The default source: the agent's own model, a text prompt that takes a while to answer. */
export function ownModel(prompt: string, cwd: string): ModelSource {
  return {
    scripted: false,
    cwd,
    runFor: (_script, agent) => ({ agent, env: process.env }),
    script: () => prompt,
    openRequests: () => 0,
    stop: async () => {},
  };
}

/** The default prompt: a turn long enough to press Stop in, whatever the model. */
export const DEFAULT_PROMPT = "Count from 1 to 300, one number per line, and write nothing else.";
