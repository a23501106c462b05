import { AgentSpawnError, spawnAgent } from "./agent-process.js";
import { type BridgeOptions, resolveSettings } from "./bridge-options.js";
import { BridgeSession, type SessionHooks } from "./bridge-session.js";
import { ExitCode } from "./exit-codes.js";
import { Logger } from "./logger.js";
import { RefusedFileError } from "./private-file.js";
import { TraceWriter } from "./trace-writer.js";
import { otelRequested } from "../otel/requested.js";

/** OpenTelemetry is loaded only when asked for (--otel, OTEL_* variables): its packages are optional. */
async function startTracing(options: BridgeOptions, logger: Logger): Promise<(() => Promise<void>) | undefined> {
  if (!otelRequested(options.otel === true)) return undefined;
  try {
    const otlp = await import("../otel/otlp.js");
    const tracing = await otlp.startOtlpTracing("acp-cancel-bridge");
    return () => tracing.shutdown().catch((error: unknown) => logger.warn(`--otel: exporting spans failed: ${String(error)}`));
  } catch (error) {
    logger.warn(`--otel: tracing is off: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** Runs `acp-cancel bridge`: spawns the agent, relays editor ↔ agent through the engine, resolves with the exit status. */
export async function runBridge(options: BridgeOptions, hooks: SessionHooks = {}): Promise<number> {
  const settings = resolveSettings(options);
  let logger: Logger;
  try {
    logger = new Logger(settings.logLevel, settings.logFile);
  } catch (error) {
    new Logger(settings.logLevel).error(cannotWrite("--log-file", settings.logFile, error));
    return ExitCode.cannotCreate;
  }
  let trace: TraceWriter | undefined;
  try {
    if (settings.trace !== undefined) trace = new TraceWriter(settings.trace, { keepSecrets: settings.traceSecrets === true });
  } catch (error) {
    logger.error(cannotWrite("--trace", settings.trace, error));
    await logger.close();
    return ExitCode.cannotCreate;
  }
  const stopTracing = await startTracing(options, logger);
  const finish = async (status: number) => {
    await stopTracing?.();
    await Promise.all([trace?.close(), logger.close()]);
    return status;
  };
  let agent;
  try {
    agent = await spawnAgent(options.command, options.args, logger.warn);
  } catch (error) {
    logger.error(error instanceof Error ? error.message : String(error));
    return finish(error instanceof AgentSpawnError ? error.exitCode : ExitCode.internal);
  }
  logger.debug(`started agent ${options.command} (pid ${agent.child.pid})`);
  const io = { input: options.editorInput ?? process.stdin, output: options.editorOutput ?? process.stdout };
  const session = new BridgeSession(settings, logger, trace, io, agent, hooks);
  return finish(await session.run());
}

/** "--trace: cannot write 'FILE': refused: it is a symbolic link", or the system's reason. */
function cannotWrite(flag: string, file: string | undefined, error: unknown): string {
  const why = error instanceof RefusedFileError ? `refused: ${error.message}` : error instanceof Error ? error.message : String(error);
  return `${flag}: cannot write '${file}': ${why}`;
}
