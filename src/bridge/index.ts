/**
 * acp-cancel/bridge: the stdio bridge as a function, for a launcher that runs it in its own
 * process (the CLI, `acp-cancel bridge -- <agent>`, is the usual way; see docs/bridge.md).
 */
export { runBridge } from "./bridge.js";
export type { BridgeOptions } from "./bridge-options.js";
export { ExitCode } from "./exit-codes.js";
