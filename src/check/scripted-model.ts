/**
 * `check --model-server`: the scripted model and the named agent's recipe as a ModelSource. Each cell gets a
 * fresh HOME with the recipe's config files; the dialog cell's recipe makes the agent ask before its shell tool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { type AgentName, agentRecipe, writeRecipeFiles } from "./agents.js";
import type { ModelSource } from "./model.js";
import { delayedMarkerCommand } from "./model-server/scripts.js";
import { startModelServer } from "./model-server/server.js";

/** How long the scripted tool waits to write its file: past its 1 s before Stop, the bridge's 2 s grace and clean-up. */
const SIDE_EFFECT_DELAY_MS = 5000;

export async function scriptedModel(name: AgentName): Promise<ModelSource> {
  const root = mkdtempSync(join(tmpdir(), "acp-cancel-check-model-"));
  const server = await startModelServer();
  let files = 0;
  return {
    scripted: true,
    launch(script, agent) {
      const recipe = agentRecipe(name, server.url, mkdtempSync(join(root, "home-")), { ask: script === "permission" });
      writeRecipeFiles(recipe);
      const missing = recipe.acpArgs.filter((arg) => !agent.args.includes(arg));
      return { ...recipe, agent: { command: agent.command, args: [...agent.args, ...missing] }, cwd: root };
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
