export { type AgentExit, AgentSpawnError, describeExit, exitStatusFor, spawnAgent } from "./agent-process.js";
export { runBridge } from "./bridge.js";
export { BRIDGE_DEFAULTS, type BridgeOptions, ON_STUCK_CHOICES, type OnStuck } from "./bridge-options.js";
export { ExitCode } from "./exit-codes.js";
export { LOG_LEVELS, type LogLevel } from "./logger.js";
export { type TraceEntry, type TraceHop, TraceWriter } from "./trace-writer.js";
