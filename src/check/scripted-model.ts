/**
 * `check --model-server`: the scripted loopback model (check/model-server) and the recipe of the
 * agent the command names (check/agents.ts) as a ModelSource. Each cell gets a fresh HOME with the
 * recipe's config files; the dialog cell's recipe makes the agent ask before its shell tool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { AgentCommand } from "./agent-run.js";
import { AGENT_NAMES, type AgentName, type AgentRecipe, agentRecipe, recognizeAgent, writeRecipeFiles } from "./agents.js";
import type { ModelScript, ModelSource, Request } from "./model.js";
import { delayedMarkerCommand, type Script } from "./model-server/scripts.js";
import { startModelServer } from "./model-server/server.js";

/** How long the scripted tool waits to write its file: past its 1 s before Stop, the bridge's 2 s grace and clean-up. */
const SIDE_EFFECT_DELAY_MS = 5000;

/** The command names no agent that --model-server has a recipe for. */
export class UnknownAgentError extends Error {}

export async function scriptedModel(command: AgentCommand, protocol: 1 | 2 = 1): Promise<ModelSource> {
  const name = recognizeAgent([command.command, ...command.args], protocol);
  if (name === undefined) {
    throw new UnknownAgentError(`--model-server has recipes for ${AGENT_NAMES.join(", ")}; '${command.command}' is none of them`);
  }
  const root = mkdtempSync(join(tmpdir(), "acp-cancel-check-model-"));
  const server = await startModelServer();
  let recipe: AgentRecipe = recipeIn(name, server.url, root, "hold");
  let sideEffect: ModelSource["sideEffect"];
  let files = 0;
  return {
    scripted: true,
    cwd: root,
    runFor(script, agent) {
      recipe = recipeIn(name, server.url, root, script);
      const missing = recipe.acpArgs.filter((arg) => !agent.args.includes(arg));
      return { agent: { command: agent.command, args: [...agent.args, ...missing] }, env: recipe.env };
    },
    get authenticate() {
      return recipe.authenticate;
    },
    async afterSession(request: Request, sessionId: string) {
      for (const { method, params } of recipe.sessionSetup(sessionId)) await request(method, params);
    },
    script(script) {
      sideEffect = undefined;
      let played: Script;
      if (script === "shell" || script === "permission") {
        sideEffect = { file: join(root, `side-effect-${++files}.txt`), delayMs: SIDE_EFFECT_DELAY_MS };
        const tool = delayedMarkerCommand(process.execPath, sideEffect.file, SIDE_EFFECT_DELAY_MS);
        played = script === "shell" ? { kind: "shell", command: tool, then: "hold" } : { kind: "permission", command: tool };
      } else played = script === "finish" ? { kind: "finish", text: "the scripted model's answer" } : { kind: "hold" };
      server.script = played;
      return script === "finish" ? "Say hello." : "Run the task.";
    },
    get sideEffect() {
      return sideEffect;
    },
    openRequests: () => server.streaming.length,
    async stop() {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The recipe in a fresh HOME under `root`, asking before tools when the script is the dialog's. */
function recipeIn(name: AgentName, url: string, root: string, script: ModelScript): AgentRecipe {
  const home = mkdtempSync(join(root, "home-"));
  const recipe = agentRecipe(name, url, home, { ask: script === "permission" });
  writeRecipeFiles(recipe);
  return recipe;
}
