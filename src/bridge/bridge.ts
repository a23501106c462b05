import { CancelEngine, type EngineEvent, type Side, type StuckTurn, type StuckVerdict } from "../acp/index.js";
import { errorMessage } from "../core/error-message.js";
import {
  describeProblem,
  ErrorCode,
  errorResponse,
  type FramingProblem,
  framingErrorResponse,
  type JsonRpcMessage,
  type JsonRpcRequest,
  jsonText,
} from "../wire/index.js";
import { otelRequested } from "../otel/requested.js";
import { type AgentExit, type AgentProcess, AgentSpawnError, describeExit, exitStatusFor, spawnAgent } from "./agent-process.js";
import { type BridgeOptions, type BridgeSettings, engineOptions, resolveSettings } from "./bridge-options.js";
import { EditorAnswers } from "./editor-answers.js";
import { ExitCode } from "./exit-codes.js";
import { SetupReplay } from "./setup-replay.js";
import { idAtLineStart } from "./line-head-id.js";
import { Logger } from "./logger.js";
import { missingPackagesMessage, OTEL_PACKAGES } from "./optional-packages.js";
import { FlushGroup, NdjsonEndpoint } from "./ndjson-endpoint.js";
import { cannotWrite } from "./private-file.js";
import { type EndedCancelledTurn, TurnProcesses } from "./turn-processes.js";
import { summarise } from "./summary.js";
import { TraceWriter } from "./trace-writer.js";

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Where the bridge meets what runs around it. */
export interface SessionHooks {
  /** A prompt the editor cancelled has really ended at the agent: the moment to stop what it left behind. */
  cancelledTurnEnded?(turn: EndedCancelledTurn): void;
}

interface ConnectedAgent {
  process: AgentProcess;
  end: NdjsonEndpoint;
}

/** One editor, one agent (replaced on `restart`), the engine between them; `run()` resolves with the exit status. */
class BridgeSession {
  private readonly engine: CancelEngine;
  private readonly editor: NdjsonEndpoint;
  private readonly flushGroup = new FlushGroup();
  private agent: ConnectedAgent;
  /** Agents replaced by a restart: their last words and their exit change nothing. */
  private readonly retired = new Set<AgentProcess>();
  private readonly replay: SetupReplay | undefined;
  private readonly turnProcesses: TurnProcesses;
  private emulations = 0;
  /** What the engine sends a restarting agent waits here. */
  private waiting: JsonRpcMessage[] | undefined;
  private restarting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopSignal: NodeJS.Signals | undefined;
  /** Set when the agent ended on its own: what it owed the editor names the exit. */
  private crashed: AgentExit | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.stopSignal ??= signal;
    void this.shutdown(`the bridge received ${signal}`);
  };

  constructor(
    private readonly settings: BridgeSettings,
    private readonly logger: Logger,
    private readonly trace: TraceWriter | undefined,
    agent: AgentProcess,
    hooks: SessionHooks,
  ) {
    this.turnProcesses = new TurnProcesses(() => this.agent.process.child.pid, settings.killGraceMs, logger, trace,
      settings.keepTurnProcesses !== true, hooks.cancelledTurnEnded);
    this.engine = new CancelEngine((side, message) => this.deliver(side, message), {
      ...engineOptions(settings),
      onEvent: (event) => this.onEvent(event),
      turnEnd: { windowMs: settings.turnEndWindowMs, onStuck: (stuck) => this.onStuck(stuck) },
      // The answer rules last: nothing rewrites an answer after them.
      plugins: [this.turnProcesses, new EditorAnswers(settings, () => this.crashed, logger.warn)],
    });
    if (settings.onStuck === "restart") this.replay = new SetupReplay();
    this.editor = new NdjsonEndpoint(
      settings.editorInput ?? process.stdin,
      settings.editorOutput ?? process.stdout,
      {
        value: (value) => {
          this.trace?.message("editor->bridge", value);
          this.engine.receive("client", value);
        },
        problem: (problem) => this.editorLineProblem(problem),
        end: () => void this.shutdown("the editor closed its input"),
      },
      settings.maxLineBytes,
      this.flushGroup,
    );
    this.agent = this.connect(agent);
  }

  /** Relays until the agent is gone (following restarts); then ends everything. The exit status. */
  async run(): Promise<number> {
    for (const signal of STOP_SIGNALS) process.on(signal, this.onSignal);
    let current = this.agent.process;
    let exit = await current.exited;
    // A restarted agent's exit is expected: wait for its successor's.
    while (this.retired.has(current)) {
      await this.restarting;
      if (current === this.agent.process) break; // the restart failed: the bridge ends with the old agent
      current = this.agent.process;
      exit = await current.exited;
    }
    this.agentGone(exit);
    for (const signal of STOP_SIGNALS) process.off(signal, this.onSignal);
    this.editor.input.pause();
    this.editor.end();
    if (this.logger.enabled("debug")) this.logger.debug(summarise(this.engine, this.emulations));
    await this.stopping; // a turn in flight at shutdown: its processes are being stopped
    if (this.stopSignal !== undefined) return exitStatusFor({ code: null, signal: this.stopSignal });
    if (this.stopping !== undefined) return ExitCode.ok;
    return exitStatusFor(exit);
  }

  /** Cancels everything in flight, closes the agent's stdin, then escalates: SIGTERM, SIGKILL. */
  shutdown(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.debug(`shutting down: ${reason}`);
      this.trace?.note(`shutdown: ${reason}`);
      // Taken before the agent goes (its tools would lose their parent), stopped once it went.
      const turnsInFlight = this.turnProcesses.stopInFlight(this.agent.process.exited);
      this.engine.answerPending("client", reason); // read while its output is open (decisions.md, "Bridge: pending requests at shutdown")
      this.engine.close("client", reason);
      this.agent.end.end();
      await Promise.all([this.escalate(), turnsInFlight]);
    })();
    return this.stopping;
  }

  private async escalate(): Promise<void> {
    const { exitGraceMs, killGraceMs } = this.settings;
    if (await this.exitsWithin(exitGraceMs)) return;
    this.logger.warn(`agent did not exit within ${exitGraceMs} ms of closing its input: SIGTERM`);
    this.agent.process.signalGroup("SIGTERM");
    if (await this.exitsWithin(killGraceMs)) return;
    this.logger.warn(`agent did not exit within ${killGraceMs} ms of SIGTERM: SIGKILL`);
    this.agent.process.signalGroup("SIGKILL");
  }

  /** Replaces the agent: what is pending for it gets an error naming `detail`; the new one is set up again (SetupReplay). */
  restart(detail: string): void {
    if (this.restarting !== undefined || this.stopping !== undefined) return;
    const old = this.agent;
    this.retired.add(old.process);
    this.waiting = [];
    this.trace?.note(`restart: ${detail}`);
    this.engine.reopen("agent", detail);
    this.restarting = this.replaceAgent(old).finally(() => {
      this.restarting = undefined;
    });
  }

  private async replaceAgent(old: ConnectedAgent): Promise<void> {
    old.end.end();
    // SIGKILL to what is left after the kill grace: the stuck tool.
    old.process.signalGroup("SIGTERM");
    void Promise.race([old.process.exited, sleep(this.settings.killGraceMs)]).then(() => {
      old.process.signalGroup("SIGKILL");
      old.process.release();
    });
    let fresh: AgentProcess;
    try {
      fresh = await spawnAgent(this.settings.command, this.settings.args, this.logger.warn);
    } catch (error) {
      this.logger.error(`restarting the agent: ${errorMessage(error)}`);
      this.waiting = undefined;
      return;
    }
    this.logger.info(`restarted the agent (pid ${fresh.child.pid})`);
    if (this.stopping !== undefined) fresh.signalGroup("SIGKILL");
    this.agent = this.connect(fresh);
    const sendQueued = () => {
      const queued = this.waiting ?? [];
      this.waiting = undefined;
      for (const message of queued) this.deliver("agent", message);
    };
    // Past `deliver`: the editor's messages wait in `waiting` until the setup is answered.
    const sendSetup = (request: JsonRpcRequest) => {
      this.trace?.message("bridge->agent", request);
      this.write("agent", request);
    };
    if (this.replay === undefined) sendQueued();
    else this.replay.replay(sendSetup, sendQueued);
  }

  private deliver(side: Side, message: JsonRpcMessage): void {
    if (side === "agent") this.replay?.toAgent(message);
    if (side === "agent" && this.waiting !== undefined) {
      this.waiting.push(message);
      return;
    }
    this.trace?.message(side === "client" ? "bridge->editor" : "bridge->agent", message);
    this.write(side, message);
  }

  /** A message too deep to serialise never throws out of here (decisions.md, "Bridge: a message too deep to write"). */
  private write(side: Side, message: JsonRpcMessage): void {
    const [to, from] = side === "client" ? [this.editor, this.agent.end] : [this.agent.end, this.editor];
    try {
      to.write(message, from);
    } catch (error) {
      const detail = `a message to the ${side === "client" ? "editor" : "agent"} is nested too deeply to serialise (${String(error)})`;
      this.logger.warn(`${detail}: ${"method" in message ? "answered with an error for its handler" : "replaced"}`);
      this.trace?.note(detail);
      if (!("id" in message)) return;
      const answer = errorResponse(message.id, ErrorCode.InternalError, `Internal error: ${detail}`);
      if ("method" in message) queueMicrotask(() => this.engine.receive(side, answer));
      else to.write(answer, from);
    }
  }

  private connect(agent: AgentProcess): ConnectedAgent {
    agent.child.stderr.pipe(this.logger.sink, { end: false });
    const end = new NdjsonEndpoint(
      agent.child.stdout,
      agent.child.stdin,
      {
        value: (value) => {
          if (this.retired.has(agent)) return;
          this.trace?.message("agent->bridge", value);
          if (this.replay?.fromAgent(value) === true) return;
          this.engine.receive("agent", value);
        },
        problem: (problem) => {
          // Stray output on the agent's stdout is not protocol: log it, never forward it.
          this.logger.warn(`agent stdout: ${describeProblem(problem, true)}`);
          this.trace?.note(`dropped agent stdout: ${describeProblem(problem, true)}`);
        },
        end: () => {},
      },
      this.settings.maxLineBytes,
      this.flushGroup,
      // An agent that stops reading holds the editor back only after a whole line's limit: a Stop is still heard.
      this.settings.maxLineBytes,
    );
    return { process: agent, end };
  }

  /** A line from the editor that is not a message: answered, with its id when its start names one. */
  private editorLineProblem(problem: FramingProblem): void {
    this.logger.warn(`editor: ${describeProblem(problem)}`);
    let answer = framingErrorResponse(problem);
    const id = problem.kind === "oversize" && problem.head !== undefined ? idAtLineStart(problem.head) : undefined;
    // An id still in flight is not this line's to answer: that request gets its own answer.
    if (id !== undefined && id !== null && this.engine.job("client", id) === undefined && "error" in answer) {
      answer = errorResponse(id, ErrorCode.InvalidRequest, answer.error.message);
    }
    this.deliver("client", answer);
  }

  /** The last agent is gone: answer what it owed, stop what it left (its group), stand its watchdog down. */
  private agentGone(exit: AgentExit): void {
    const detail = describeExit(exit);
    if (this.stopping === undefined) {
      this.crashed = exit;
      const pending = this.engine.inFlight.client;
      const answered = pending > 0 ? `; ${pending} pending editor request(s) get an error naming the exit` : "";
      this.logger.warn(`the agent ended on its own (${detail})${answered}`);
    } else this.logger.debug(detail);
    this.trace?.note(detail);
    this.engine.close("agent", detail);
    this.engine.close("client", detail);
    this.agent.process.signalGroup("SIGKILL");
    this.agent.process.release();
  }

  private readonly exitsWithin = (ms: number) =>
    Promise.race([this.agent.process.exited.then(() => true), sleep(ms).then(() => false)]);

  private onEvent(event: EngineEvent): void {
    if (event.type === "emulated") this.emulations++;
    if (event.type === "problem") this.logger.warnRepeated(`${event.side === "client" ? "editor" : "agent"}: ${event.detail}`);
    if (event.type === "protocol-version") {
      const version = `protocol version ${jsonText(event.version, 100)}`;
      if (event.rules !== "pass-through") this.logger.debug(`${version}: ${event.rules} rules`);
      else this.logger.warn(`agent answered initialize with ${version}, which acp-cancel does not know: ` +
        "messages pass through untouched (only $/cancel_request is tracked)");
    }
    this.trace?.note(jsonText(event));
  }

  private onStuck(stuck: StuckTurn): StuckVerdict {
    const what = `session ${stuck.sessionId}: the agent has not ended its cancelled turn ${stuck.stuckForMs} ms after the bridge answered it`;
    if (this.settings.onStuck === "kill-tools" && stuck.escalation === 1) {
      this.logger.warn(`${what}: stopping the processes it started during the turn`);
      void this.turnProcesses.stopStuck(stuck.promptId, stuck.turnAgeMs);
      return "wait";
    }
    if (this.settings.onStuck === "restart") {
      this.logger.warn(`${what}: restarting the agent`);
      this.restart(
        `the agent was restarted because session ${stuck.sessionId}'s cancelled turn was stuck for ` +
        `${stuck.stuckForMs} ms; its sessions are gone (open a new one, or session/load it if the agent can)`,
      );
      return "fail";
    }
    this.logger.warn(`${what}: failing the prompts waiting behind it`);
    return "fail";
  }
}

/** OpenTelemetry is loaded only when asked for (--otel, OTEL_* variables): its packages are optional. */
async function startTracing(options: BridgeOptions, logger: Logger): Promise<(() => Promise<void>) | undefined> {
  if (!otelRequested(options.otel === true)) return undefined;
  try {
    const missing = missingPackagesMessage(OTEL_PACKAGES);
    if (missing !== undefined) throw new Error(`it ${missing}`);
    const otlp = await import("../otel/otlp.js");
    const tracing = await otlp.startOtlpTracing("acp-cancel-bridge");
    return () => tracing.shutdown().catch((error: unknown) => logger.warn(`--otel: exporting spans failed: ${String(error)}`));
  } catch (error) {
    logger.warn(`--otel: tracing is off: ${errorMessage(error)}`);
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
    logger.error(errorMessage(error));
    return finish(error instanceof AgentSpawnError ? error.exitCode : ExitCode.internal);
  }
  logger.debug(`started agent ${options.command} (pid ${agent.child.pid})`);
  return finish(await new BridgeSession(settings, logger, trace, agent, hooks).run());
}
