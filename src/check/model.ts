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
  /** The agent's environment for every run; a scripted source seals it (fresh HOME, fake keys, base URLs). */
  readonly env: NodeJS.ProcessEnv;
  /** The directory a run starts in and opens its session in. */
  readonly cwd: string;
  /** `authenticate`'s methodId to call before `session/new`, when the agent needs one. */
  readonly authMethod?: string;
  /** Calls the agent needs after `session/new` (a mode without an approval classifier, say). */
  afterSession?(request: Request, sessionId: string): Promise<void>;
  /** Makes the model do `script` with the next turn; the prompt text to send for it. */
  script(script: ModelScript): string;
  /** A file the shell script's command writes after a delay, unless it was stopped first. */
  readonly sideEffectFile?: string;
  /** How many of the model's turn requests the agent still holds open. */
  openRequests(): number;
  stop(): Promise<void>;
}

/** The default source: the agent's own model, a text prompt that takes a while to answer. */
export function ownModel(prompt: string, cwd: string): ModelSource {
  return {
    scripted: false,
    env: process.env,
    cwd,
    script: () => prompt,
    openRequests: () => 0,
    stop: async () => {},
  };
}

/** Starts a scripted model server for `agent`; undefined when this build has none. */
export type ModelServerFactory = (agent: AgentCommand) => Promise<ModelSource>;

/** The default prompt: a turn long enough to press Stop in, whatever the model. */
export const DEFAULT_PROMPT = "Count from 1 to 300, one number per line, and write nothing else.";
