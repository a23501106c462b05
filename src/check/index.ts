/** What `acp-cancel check` and the interop suite share: the scripted model, and how to point each known agent at it. */
export { startModelServer, type ModelServer } from "./model-server/server.js";
export { delayedMarkerCommand, type Script } from "./model-server/scripts.js";
export type { DialectName } from "./model-server/dialects.js";
export { AGENT_NAMES, type AgentName, type AgentRecipe, agentRecipe, writeRecipeFiles } from "./agents.js";
