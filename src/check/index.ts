/**
 * What `acp-cancel check` and the interop suite share: a scripted model that speaks the APIs the
 * real agents dial, and how to point each known agent at it offline.
 */
export { startModelServer, type ModelServer, type ModelServerOptions } from "./model-server/server.js";
export { type DialectName, delayedMarkerCommand, type Script, type TurnRecord } from "./model-server/scripts.js";
export {
  AGENT_NAMES,
  type AgentName,
  type AgentRecipe,
  agentRecipe,
  baseEnv,
  recognizeAgent,
  type RecipeOptions,
  writeRecipeFiles,
} from "./agents.js";
