import { CancelEngine, type EngineEvent, type Side, type StuckTurn, type StuckVerdict } from "../acp/index.js";
import { describeProblem, framingErrorResponse, type JsonRpcMessage, type JsonRpcRequest } from "../wire/index.js";
import {
  type AgentProcess,
  AgentSpawnError,
  describeExit,
  exitStatusFor,
  spawnAgent,
} from "./agent-process.js";
import { BRIDGE_DEFAULTS, type BridgeOptions } from "./bridge-options.js";
import { ExitCode } from "./exit-codes.js";
import { FlushGroup } from "./flush-group.js";
import { Logger } from "./logger.js";
import { NdjsonEndpoint } from "./ndjson-endpoint.js";
import { summarise } from "./summary.js";
import { stopTurnTools } from "./stop-turn-tools.js";
import { TraceWriter } from "./trace-writer.js";
import { turnProcessesFor } from "./turn-processes.js";

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
  logger.debug(`started agent ${options.command} (pid ${agent.child.pid})`);

  const emulated: string[] = [];
  const onEvent = (event: EngineEvent) => {
    if (event.type === "emulated") emulated.push(event.what);
    if (event.type === "problem")
      logger.warn(`${event.side === "client" ? "editor" : "agent"}: ${event.detail}`);
    if (event.type === "protocol-version") logVersion(logger, event.version, event.rules);
    trace?.note(JSON.stringify(event));
  };
  const engine = new CancelEngine(deliver, {
    graceMs: settings.graceMs,
    deadlines: settings.deadlines ?? {},
    cleanupMethods: settings.cleanupMethods ?? [],
    client: { cancelSupport: settings.editorSupport ?? "auto" },
    agent: { cancelSupport: settings.agentSupport ?? "auto" },
    onEvent,
    turnEnd: { windowMs: settings.turnEndWindowMs, onStuck },
  });

  /** The window passed and the agent still has not ended a cancelled turn. */
  function onStuck(stuck: StuckTurn): StuckVerdict {
    const what = `session ${stuck.sessionId}: the agent has not ended its cancelled turn ${stuck.stuckForMs} ms after the bridge answered it`;
    if (settings.onStuck === "kill-tools" && stuck.escalation === 1) {
      logger.warn(`${what}: stopping the processes it started during the turn`);
      const pid = agent.child.pid;
      if (pid !== undefined) {
        void stopTurnTools(pid, stuck.turnAgeMs, settings.killGraceMs).then((stopped) => {
          trace?.note(`kill-tools: SIGTERM ${JSON.stringify(stopped.terminated)}, SIGKILL ${JSON.stringify(stopped.killed)}`);
          logger.info(`kill-tools: SIGTERM to ${stopped.terminated.length}, SIGKILL to ${stopped.killed.length}`);
        });
      }
      return "wait";
    }
    if (settings.onStuck === "restart") {
      logger.warn(`${what}: restarting the agent`);
      restartAgent(stuck);
      return "fail";
    }
    logger.warn(`${what}: failing the prompts waiting behind it`);
    return "fail";
  }

  // A cancelled turn's processes still running shortly after its answer are stopped (turn-processes.ts).
  const turnProcesses = turnProcessesFor(settings.keepTurnProcesses, settings.killGraceMs, () => agent.child.pid, {
    note: (text) => trace?.note(text),
    info: (text) => logger.info(text),
    warn: (text) => logger.warn(text),
  });

  /** What a chunk from either side produced leaves at once, as a byte relay's would. */
  const flushGroup = new FlushGroup();
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
    flushGroup,
  );
  /** Agents replaced by a restart: their last words and their exit change nothing. */
  const retired = new Set<AgentProcess>();
  /** The id of the `initialize` the bridge replays to a restarted agent (its answer is ours). */
  let replayId: string | undefined;
  const connectAgent = (proc: AgentProcess) => {
    proc.child.stderr.pipe(logger.sink, { end: false });
    return new NdjsonEndpoint(
      proc.child.stdout,
      proc.child.stdin,
      {
        value(value) {
          if (retired.has(proc)) return;
          trace?.message("agent->bridge", value);
          if (replayId !== undefined && (value as { id?: unknown }).id === replayId && !("method" in (value as object))) {
            replayId = undefined; // the restarted agent's answer to the replayed initialize
            return;
          }
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
      flushGroup,
    );
  };
  let agentEnd = connectAgent(agent);

  /** With --on-stuck restart: the editor's initialize (as sent to the agent), to replay. */
  const keepsInitialize = settings.onStuck === "restart";
  let initialize: JsonRpcRequest | undefined;
  /** While an agent restarts, what the engine sends it waits here. */
  let waiting: JsonRpcMessage[] | undefined;

  function deliver(side: Side, message: JsonRpcMessage): void {
    turnProcesses?.see(side, message);
    if (side === "client") {
      trace?.message("bridge->editor", message);
      editor.write(message, agentEnd, agent.child.stdout);
      return;
    }
    if (keepsInitialize && (message as JsonRpcRequest).method === "initialize") initialize = message as JsonRpcRequest;
    if (waiting !== undefined) {
      waiting.push(message);
      return;
    }
    trace?.message("bridge->agent", message);
    agentEnd.write(message, editor, editorInput);
  }

  let restarting: Promise<void> | undefined;
  let restarts = 0;
  /**
   * Replaces a stuck agent: everything pending for it is answered with an error naming
   * why; the new agent gets the editor's initialize again, then whatever came meanwhile.
   * Its sessions are gone: an editor must open new ones (or session/load them).
   */
  function restartAgent(stuck: StuckTurn): void {
    if (restarting !== undefined || stopping !== undefined) return;
    const old = agent;
    const oldEnd = agentEnd;
    retired.add(old);
    waiting = [];
    const detail =
      `the agent was restarted because session ${stuck.sessionId}'s cancelled turn was stuck for ` +
      `${stuck.stuckForMs} ms; its sessions are gone (open a new one, or session/load it if the agent can)`;
    trace?.note(`restart: ${detail}`);
    engine.reopen("agent", detail);
    restarting = (async () => {
      oldEnd.end();
      old.signalGroup("SIGTERM");
      // What it left in its group (the stuck tool) goes too, SIGTERM or not.
      void Promise.race([old.exited, sleep(settings.killGraceMs)]).then(() => old.signalGroup("SIGKILL"));
      try {
        agent = await spawnAgent(options.command, options.args);
      } catch (error) {
        logger.error(`restarting the agent: ${error instanceof Error ? error.message : String(error)}`);
        waiting = undefined;
        restarting = undefined;
        return;
      }
      restarts++;
      logger.info(`restarted the agent (pid ${agent.child.pid})`);
      // The bridge began shutting down meanwhile: the new agent is not needed.
      if (stopping !== undefined) agent.signalGroup("SIGKILL");
      agentEnd = connectAgent(agent);
      const queued = waiting ?? [];
      waiting = undefined;
      if (initialize !== undefined) {
        replayId = `acp-cancel/restart-${restarts}`;
        deliver("agent", { ...initialize, id: replayId });
      }
      for (const message of queued) deliver("agent", message);
      restarting = undefined;
    })();
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

  let current = agent;
  let exit = await current.exited;
  // A restarted agent's exit is expected: wait for its successor's.
  while (retired.has(current)) {
    await restarting;
    if (current === agent) break; // the restart failed: the bridge ends with the old agent
    current = agent;
    exit = await current.exited;
  }
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

/** Which rules the agent's `initialize` answer put in force; an unknown version is a warning. */
function logVersion(logger: Logger, version: unknown, rules: string): void {
  if (rules === "pass-through") {
    logger.warn(
      `agent answered initialize with protocol version ${JSON.stringify(version)}, which acp-cancel does not know: messages pass through untouched (only $/cancel_request is tracked)`,
    );
  } else logger.debug(`protocol version ${JSON.stringify(version)}: ${rules} rules`);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
