import type { EngineOptions } from "./engine-options.js";
import type { EngineHost, EnginePlugin } from "./engine-plugin.js";
import { TurnAftermath } from "./turn-aftermath.js";

/** The plug-in an engine's options turn on, if any: today `turnEnd` (turn-aftermath.ts). */
export function pluginFor(options: EngineOptions, host: EngineHost): EnginePlugin | undefined {
  if (options.turnEnd === undefined) return undefined;
  return new TurnAftermath(host, options.turnEnd, options.graceMs);
}
