/**
 * Where a check's model comes from: the agent's own (only the cells a plain text turn can show run), or with
 * --model-server the scripted model, the agent pointed at it by its recipe (a fresh HOME per cell).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentName, type AgentRecipe, agentRecipe, writeRecipeFiles } from "./agents.js";
import { delayedMarkerCommand } from "./model-server/scripts.js";
import { startModelServer } from "./model-server/server.js";

export type ModelScript = "hold" | "shell" | "permission" | "finish";

/** What the model will do with the next turn: the prompt to send, and what its tool writes, and when, unless stopped first. */
export interface Scripted {
  readonly text: string;
  readonly sideEffect?: { readonly file: string; readonly delayMs: number } | undefined;
}

export interface ModelSource {
  /** Whether turns can be scripted (the tool, dialog and next-prompt cells need it). */
  readonly scripted: boolean;
  /** Where the sessions open. */
  readonly cwd: string;
  /** How to start the agent for a cell whose turn is scripted `script`. */
  recipe(script: ModelScript): AgentRecipe;
  script(script: ModelScript): Scripted;
  /** How many of the model's turn requests the agent still holds open. */
  openRequests(): number;
  stop(): Promise<void>;
}

/** The default prompt: a turn long enough to press Stop in, whatever the model. */
export const DEFAULT_PROMPT = "Count from 1 to 300, one number per line, and write nothing else.";

/** The default source: the agent's own model, a text prompt that takes a while to answer, in a folder of its own. */
export function ownModel(prompt: string): ModelSource {
  const cwd = mkdtempSync(join(tmpdir(), "acp-cancel-check-"));
  return {
    scripted: false,
    cwd,
    recipe: () => ({ env: process.env, files: [], acpArgs: [], sessionSetup: () => [] }),
    script: () => ({ text: prompt }),
    openRequests: () => 0,
    stop: async () => rmSync(cwd, { recursive: true, force: true }),
  };
}

/** How long the scripted tool waits to write its file: past its 1 s before Stop, the bridge's 2 s grace and clean-up. */
const SIDE_EFFECT_DELAY_MS = 5000;

/** `check --model-server`: the scripted model, and `name`'s recipe written into a fresh HOME for each cell. */
export async function scriptedModel(name: AgentName): Promise<ModelSource> {
  const root = mkdtempSync(join(tmpdir(), "acp-cancel-check-model-"));
  const server = await startModelServer();
  let files = 0;
  return {
    scripted: true,
    cwd: root,
    recipe(script) {
      const recipe = agentRecipe(name, server.url, mkdtempSync(join(root, "home-")), { ask: script === "permission" });
      writeRecipeFiles(recipe);
      return recipe;
    },
    script(script) {
      const text = script === "finish" ? "Say hello." : "Run the task.";
      if (script !== "shell" && script !== "permission") {
        server.script = script === "finish" ? { kind: "finish", text: "the scripted model's answer" } : { kind: "hold" };
        return { text };
      }
      const sideEffect = { file: join(root, `side-effect-${++files}.txt`), delayMs: SIDE_EFFECT_DELAY_MS };
      const tool = delayedMarkerCommand(process.execPath, sideEffect.file, SIDE_EFFECT_DELAY_MS);
      server.script = script === "shell" ? { kind: "shell", command: tool, then: "hold" } : { kind: "permission", command: tool };
      return { text, sideEffect };
    },
    openRequests: () => server.streaming.length,
    async stop() {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
