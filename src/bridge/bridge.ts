import { CancelEngine, type EngineEvent, type Side } from "../acp/index.js";
import { describeProblem, framingErrorResponse, type JsonRpcMessage } from "../wire/index.js";
import {
  type AgentProcess,
  AgentSpawnError,
  describeExit,
  exitStatusFor,
  spawnAgent,
} from "./agent-process.js";
import { BRIDGE_DEFAULTS, type BridgeOptions } from "./bridge-options.js";
import { ExitCode } from "./exit-codes.js";
import { Logger } from "./logger.js";
import { NdjsonEndpoint } from "./ndjson-endpoint.js";
import { summarise } from "./summary.js";
import { TraceWriter } from "./trace-writer.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs `acp-cancel bridge`: spawns the agent and relays ndjson between the editor (this
 * process's stdin/stdout) and the agent's stdio through the cancellation engine. Resolves
 * with the exit status once the agent is gone.
 */
export async function runBridge(options: BridgeOptions): Promise<number> {
  const settings = { ...BRIDGE_DEFAULTS, ...definedOnly(options) };
  const logger = new Logger(settings.logLevel, settings.logFile);
  const trace = settings.trace === undefined ? undefined : new TraceWriter(settings.trace);
  const editorInput = options.editorInput ?? process.stdin;
  const editorOutput = options.editorOutput ?? process.stdout;

  let agent: AgentProcess;
  try {
    agent = await spawnAgent(options.command, options.args);
  } catch (error) {
    const status = error instanceof AgentSpawnError ? error.exitCode : ExitCode.internal;
    logger.error(error instanceof Error ? error.message : String(error));
    await Promise.all([trace?.close(), logger.close()]);
    return status;
  }
  agent.child.stderr.pipe(logger.sink, { end: false });
  logger.debug(`started agent ${options.command} (pid ${agent.child.pid})`);

  const emulated: string[] = [];
  const onEvent = (event: EngineEvent) => {
    if (event.type === "emulated") emulated.push(event.what);
    if (event.type === "problem")
      logger.warn(`${event.side === "client" ? "editor" : "agent"}: ${event.detail}`);
    trace?.note(JSON.stringify(event));
  };
  const engine = new CancelEngine(deliver, {
    graceMs: settings.graceMs,
    deadlines: settings.deadlines ?? {},
    client: { cancelSupport: settings.editorSupport ?? "auto" },
    agent: { cancelSupport: settings.agentSupport ?? "auto" },
    onEvent,
  });

  const editor = new NdjsonEndpoint(
    editorInput,
    editorOutput,
    {
      value(value) {
        trace?.message("editor->bridge", value);
        engine.receive("client", value);
      },
      problem(problem) {
        logger.warn(`editor: ${describeProblem(problem)}`);
        deliver("client", framingErrorResponse(problem));
      },
      end() {
        void shutdown("the editor closed its input");
      },
    },
    settings.maxLineBytes,
  );
  const agentEnd = new NdjsonEndpoint(
    agent.child.stdout,
    agent.child.stdin,
    {
      value(value) {
        trace?.message("agent->bridge", value);
        engine.receive("agent", value);
      },
      problem(problem) {
        // Stray output on the agent's stdout is not protocol: log it, never forward it.
        logger.warn(`agent stdout: ${describeProblem(problem)}`);
        trace?.note(`dropped agent stdout: ${describeProblem(problem)}`);
      },
      end() {},
    },
    settings.maxLineBytes,
  );

  function deliver(side: Side, message: JsonRpcMessage): void {
    if (side === "client") {
      trace?.message("bridge->editor", message);
      editor.write(message, agentEnd, agent.child.stdout);
    } else {
      trace?.message("bridge->agent", message);
      agentEnd.write(message, editor, editorInput);
    }
  }

  let stopping: Promise<void> | undefined;
  let stopSignal: NodeJS.Signals | undefined;
  let agentExited = false;
  /** Cancels everything in flight, closes the agent's stdin, then escalates: SIGTERM, SIGKILL. */
  function shutdown(reason: string): Promise<void> {
    stopping ??= (async () => {
      logger.debug(`shutting down: ${reason}`);
      trace?.note(`shutdown: ${reason}`);
      engine.close("client", reason);
      agentEnd.end();
      if (await exitsWithin(settings.exitGraceMs)) return;
      logger.warn(`agent did not exit within ${settings.exitGraceMs} ms of closing its input: SIGTERM`);
      agent.signalGroup("SIGTERM");
      if (await exitsWithin(settings.killGraceMs)) return;
      logger.warn(`agent did not exit within ${settings.killGraceMs} ms of SIGTERM: SIGKILL`);
      agent.signalGroup("SIGKILL");
    })();
    return stopping;
  }
  const exitsWithin = (ms: number) =>
    Promise.race([agent.exited.then(() => true), sleep(ms).then(() => agentExited)]);

  const onSignal = (signal: NodeJS.Signals) => {
    stopSignal ??= signal;
    void shutdown(`the bridge received ${signal}`);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const exit = await agent.exited;
  agentExited = true;
  const detail = describeExit(exit);
  logger.debug(detail);
  trace?.note(detail);
  engine.close("agent", detail);
  engine.close("client", detail);
  // Whatever the agent left running in its group goes with it.
  agent.signalGroup("SIGKILL");
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  editorInput.pause();
  editor.end();
  if (logger.enabled("debug")) logger.debug(summarise(engine, emulated));
  await Promise.all([trace?.close(), logger.close()]);
  if (stopSignal !== undefined) return exitStatusFor({ code: null, signal: stopSignal });
  if (stopping !== undefined) return ExitCode.ok;
  return exitStatusFor(exit);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
