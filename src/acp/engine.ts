import { type AnyJob, type CancelReason, GraceTimers, Job, JobTable, RecentKeys } from "../core/index.js";
import {
  classify,
  ErrorCode,
  kindOf,
  errorResponse,
  invalidRequestResponse,
  isJsonRpcId,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  notification,
} from "../wire/index.js";
import { abandonedAnswer } from "./cancelled-answers.js";
import { type CancellationCapability, readCapability, withCapability } from "./capability.js";
import { cleanupMethodSet } from "./cleanup-methods.js";
import {
  type CancelSupport,
  DEFAULT_GRACE_MS,
  type Deliver,
  type EngineEvent,
  type EngineOptions,
  type PortOptions,
} from "./engine-options.js";
import { Method, otherSide, type Side, sessionIdOf } from "./methods.js";
import { isRequestJob, newRecord, type RequestJob, type RequestRecord } from "./request-record.js";
import { SessionWork, type WorkJob } from "./session-work.js";
import { PASS_THROUGH_RULES } from "./versions/pass-through.js";
import { rulesFor, type VersionRules, type WorkChange } from "./versions/rules.js";
import { V1_RULES } from "./versions/v1.js";
import { type AftermathStats, SESSION_UPDATE, TurnAftermath } from "./turn-aftermath.js";

type Table = JobTable<JsonRpcId, RequestRecord>;

/** Counters for summaries and benchmarks; plain integers, cheap to keep. */
export interface EngineStats {
  requests: number;
  cancels: number;
  answeredForPeer: number;
  cancelledAtBirth: number;
  lateRepliesDropped: number;
}

/** How many unanswered-by-peer ids to remember so their late replies are dropped. */
const LATE_REPLY_MEMORY = 4096;
const LATENCY_MEMORY = 4096;
const clock = performance;
const nowMs = () => clock.now();

/**
 * The ACP cancellation engine. It sits on the path of every JSON-RPC message between a
 * client side and an agent side and keeps one job table per issuer. It knows nothing
 * about bytes or processes: the embedded placement and the bridge feed it messages and
 * give it a `deliver` function.
 */
export class CancelEngine {
  // The engine never asks "already settled?" (late replies have their own memory), so its
  // tables remember no settled keys: one Set operation less per response.
  private readonly tables: Record<Side, Table> = {
    client: new JobTable(),
    agent: new JobTable(),
  };
  private readonly lateReplies: Record<Side, RecentKeys<JsonRpcId>> = {
    client: new RecentKeys(LATE_REPLY_MEMORY),
    agent: new RecentKeys(LATE_REPLY_MEMORY),
  };
  /** The running turn of each session: its prompt (v1), or its foreground work (v2). */
  private readonly turns = new Map<string, AnyJob>();
  /** The rules of the protocol version in force, chosen at `initialize` (v1 until then). */
  private rules: VersionRules = V1_RULES;
  /** Params objects of requests that handlers are about to send, marked with their parent. */
  private readonly nested = new WeakMap<object, RequestJob>();
  private readonly ports: Record<Side, PortOptions>;
  private readonly negotiated: Record<Side, CancellationCapability | undefined> = {
    client: undefined,
    agent: undefined,
  };
  /** Why each side is gone; undefined while it is open. */
  private readonly closed: Record<Side, string | undefined> = { client: undefined, agent: undefined };
  private readonly graceMs: number;
  private readonly grace: GraceTimers<RequestJob>;
  private readonly deadlines: ReadonlyMap<string, number>;
  /** Requests that stop or free something: never nested, so never cancelled for anyone. */
  private readonly cleanup: ReadonlySet<string>;
  private readonly onEvent: ((event: EngineEvent) => void) | undefined;
  private readonly now: () => number;
  /** The clock `now` reads when the options gave none: read inline on the answer path. */
  private readonly ownClock: boolean;
  /** What each port's options decide about `$/cancel_request` (undefined: negotiation does). */
  private readonly forcedSupport: Record<Side, boolean | undefined>;
  /** [turn-aftermath] Cancelled foreground work (v2) the agent has this long to end before the engine gives up. */
  private readonly workGrace: GraceTimers<WorkJob>;
  /** Cancelled turns answered for the agent that the agent has not really ended yet. */
  private readonly aftermath: TurnAftermath;
  readonly stats: EngineStats = {
    requests: 0,
    cancels: 0,
    answeredForPeer: 0,
    cancelledAtBirth: 0,
    lateRepliesDropped: 0,
  };
  /** Milliseconds from a cancel reaching a job to its answer leaving (the last 4096), for summaries. */
  readonly cancelLatencies: number[] = [];
  private latencyCursor = 0;

  constructor(
    private readonly deliver: Deliver,
    options: EngineOptions = {},
  ) {
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.grace = new GraceTimers(this.graceMs, (job) => this.graceExpired(job));
    this.workGrace = new GraceTimers(this.graceMs, (work) => this.workGivenUp(work));
    this.deadlines = new Map(Object.entries(options.deadlines ?? {}));
    this.cleanup = cleanupMethodSet(options.cleanupMethods);
    this.ports = { client: options.client ?? {}, agent: options.agent ?? {} };
    this.onEvent = options.onEvent;
    this.now = options.now ?? nowMs;
    this.ownClock = options.now === undefined;
    this.forcedSupport = { client: forcedSupport(this.ports.client), agent: forcedSupport(this.ports.agent) };
    this.aftermath = new TurnAftermath(
      {
        now: () => this.now(),
        forward: (job, request) => this.forwardHeldPrompt(job, request),
        refuse: (job, response) => this.answer(job, response),
        emit: (event) => this.emit(event),
      },
      options.turnEnd,
    );
  }

  // ---- what the placements call -------------------------------------------------

  /** A message written by side `from`, on its way to the other side. */
  receive(from: Side, value: unknown): void {
    if (this.closed[from] !== undefined) return; // a gone side's last words change nothing
    switch (kindOf(value)) {
      case "request":
        this.onRequest(from, value as JsonRpcRequest);
        return;
      case "response":
        this.onResponse(from, value as JsonRpcResponse);
        return;
      case "notification":
        this.onNotification(from, value as JsonRpcNotification);
        return;
      default: {
        const classified = classify(value);
        if (classified.kind === "invalid") this.onInvalid(from, value, classified.problem, classified.id);
      }
    }
  }

  /**
   * A request-shaped mistake is answered to its sender. A response-shaped one must not be:
   * its id belongs to the other side's id space. It answers the request it names instead.
   */
  private onInvalid(from: Side, value: unknown, problem: string, id: JsonRpcId): void {
    this.emit({ type: "problem", side: from, detail: problem });
    // An error without an id is a response too (codex-acp answers notifications so): never answer it.
    const responseShaped =
      typeof value === "object" && value !== null && !("method" in value) &&
      ("id" in value || "error" in value || "result" in value);
    if (!responseShaped) {
      this.send(from, invalidRequestResponse(id, problem));
      return;
    }
    const job = this.tables[otherSide(from)].get(id);
    if (job === undefined) return;
    job.payload.handlerAnswered = true;
    const answer = errorResponse(id, ErrorCode.InternalError, `Invalid response from the peer: ${problem}`);
    // A cancelled request is answered like every cancelled request, however garbled the reply.
    if (job.isRunning) this.answer(job, answer);
    else this.finishCancelled(job, this.rules.normaliseCancelled(job, answer));
  }

  /**
   * Side `side` is gone (EOF, crash, close). Everything it owed is answered with an error
   * naming `detail`; everything it asked for is cancelled toward the other side.
   */
  close(side: Side, detail: string): void {
    if (this.closed[side] !== undefined) return;
    this.closed[side] = detail;
    const survivor = otherSide(side);
    // What the gone side asked for: cancel toward the survivor (cascading), answer nobody.
    for (const job of [...this.tables[side].values()]) {
      if (job.isRunning && !this.cleanup.has(job.payload.method)) this.cancelJob(job, "shutdown");
    }
    // What the gone side owed: answer the survivor now, naming why.
    for (const job of [...this.tables[survivor].values()]) {
      job.cancel("shutdown");
      // An answer already given (held for nested requests) stands; otherwise name the loss.
      this.answer(job, job.payload.held ?? abandonedAnswer(job.payload.id, detail));
    }
    for (const job of [...this.tables[side].values()]) this.answer(job, this.rules.cancelledAnswer(job, detail));
    for (const turn of this.turns.values()) if (isWorkJob(turn)) this.workGrace.stop(turn);
    this.turns.clear();
    this.aftermath.clear(); // [turn-aftermath] nothing will end those turns now
  }

  /**
   * Side `side` was replaced by a fresh peer (the bridge restarted the agent): everything
   * the old one owed or asked for is answered as on close, naming `detail`; then the side
   * is open again, with nothing negotiated and no sessions known.
   */
  reopen(side: Side, detail: string): void {
    if (this.closed[side] !== undefined) return;
    this.close(side, detail);
    this.closed[side] = undefined;
    this.negotiated[side] = undefined;
  }

  /** Counters of the turns tracked past their synthetic answer (zero unless `turnEnd` is set). */
  get aftermathStats(): Readonly<AftermathStats> {
    return this.aftermath.stats;
  }

  /** Cancels a request issued by `issuer` from inside (an app's own decision). */
  cancel(issuer: Side, id: JsonRpcId, reason: CancelReason = "internal") {
    const job = this.tables[issuer].get(id);
    if (job === undefined) return this.tables[issuer].cancel(id, reason);
    return this.cancelJob(job, reason);
  }

  /** The in-flight job for a request `issuer` sent, if any. */
  job(issuer: Side, id: JsonRpcId): RequestJob | undefined {
    return this.tables[issuer].get(id);
  }

  /** The capability each side advertised at `initialize` (undefined: none seen). */
  get peerCapabilities(): Readonly<Record<Side, CancellationCapability | undefined>> {
    return this.negotiated;
  }

  /** Requests in flight per issuer; both are zero at quiescence. */
  get inFlight(): Readonly<Record<Side, number>> {
    return { client: this.tables.client.size, agent: this.tables.agent.size };
  }

  /** True when a side honours `$/cancel_request` (forced, in process, or advertised). */
  supportsCancel(side: Side): boolean {
    return this.forcedSupport[side] ?? this.negotiated[side]?.cancelRequest === true;
  }

  // ---- requests ---------------------------------------------------------------------

  private onRequest(from: Side, request: JsonRpcRequest): void {
    const table = this.tables[from];
    const { id, method } = request;
    if (table.has(id)) {
      const problem = `request id ${JSON.stringify(id)} is already in flight`;
      this.emit({ type: "problem", side: from, detail: problem });
      this.send(from, invalidRequestResponse(id, problem));
      return;
    }
    this.stats.requests++;
    const gone = this.closed[otherSide(from)];
    if (gone !== undefined) {
      this.send(from, abandonedAnswer(id, gone));
      return;
    }
    const sessionId = sessionIdOf(request.params);
    // [turn-aftermath] the agent asks for a turn already answered cancelled: refused at once.
    if (from === "agent" && sessionId !== undefined && this.aftermath.size !== 0) {
      if (this.aftermath.refusesRequest(sessionId)) {
        this.refuseLateRequest(table.create(id, newRecord(id, method, sessionId, from)) as RequestJob);
        return;
      }
    }
    const parent = this.cleanup.has(method) ? undefined : this.parentFor(from, method, request.params, sessionId);
    const job = table.create(id, newRecord(id, method, sessionId, from), parent) as RequestJob;
    if (parent?.isDoomed) {
      this.cancelAtBirth(job, parent.cause ?? "internal");
      return;
    }
    let outgoing: JsonRpcRequest = request;
    let held = false;
    if (method === Method.initialize && from === "client") outgoing = this.negotiateClient(request);
    else if (method === Method.prompt && sessionId !== undefined) {
      this.startTurn(sessionId, job);
      // [turn-aftermath] behind a turn the agent has not really ended, a prompt waits.
      held = from === "client" && this.aftermath.size !== 0 && this.aftermath.holds(job, request);
      if (!held) this.aftermath.turnStarted(job);
    } else if (method === Method.sessionClose && sessionId !== undefined && !this.rules.passThrough)
      this.cancelSession(sessionId);
    const deadline = this.deadlines.get(method);
    if (deadline !== undefined && !job.isSettled) {
      job.setDeadline(deadline, (expired) => this.cancelJob(expired, "deadline"));
    }
    if (held) return;
    job.payload.delivered = true;
    this.send(otherSide(from), outgoing);
  }

  /** Nested requests belong to the handler that made them, else to their session's turn. */
  private parentFor(
    from: Side,
    method: string,
    params: unknown,
    sessionId: string | undefined,
  ): AnyJob | undefined {
    if (typeof params === "object" && params !== null) {
      const marked = this.nested.get(params);
      if (marked !== undefined && !marked.isSettled && marked.payload.issuer !== from) return marked;
    }
    if (from === "agent" && sessionId !== undefined) {
      const turn = this.turns.get(sessionId);
      // Background work listed by the work's latest state_update is not part of it (v2).
      if (turn?.payload instanceof SessionWork && this.rules.forBackground(method, params, turn.payload)) return undefined;
      return turn;
    }
    return undefined;
  }

  /**
   * Marks `params` as belonging to a request that `job`'s handler is about to send. The
   * embedded placement calls this from the handler's context; the mark is read when the
   * request passes through `receive`.
   */
  nestUnder(params: object, job: RequestJob): void {
    this.nested.set(params, job);
  }

  /** [turn-aftermath] A request of a turn the client was already told is over: never shown. */
  private refuseLateRequest(job: RequestJob): void {
    job.cancel("session");
    const { id, method, sessionId } = job.payload;
    this.emit({ type: "late-request-refused", sessionId: sessionId ?? "", id, method });
    this.answer(job, this.rules.cancelledAnswer(job, "its turn was already answered cancelled"));
  }

  /** [turn-aftermath] The turn before it really ended: a held prompt goes to the agent now. */
  private forwardHeldPrompt(job: RequestJob, request: JsonRpcRequest): void {
    const gone = this.closed.agent;
    if (gone !== undefined) {
      this.answer(job, abandonedAnswer(job.payload.id, gone));
      return;
    }
    job.payload.delivered = true;
    const { sessionId } = job.payload;
    if (sessionId !== undefined) this.startTurn(sessionId, job); // v2: the old work ended, new work opens
    this.aftermath.turnStarted(job);
    this.send("agent", request);
  }

  private cancelAtBirth(job: RequestJob, reason: CancelReason): void {
    this.stats.cancelledAtBirth++;
    job.cancel(reason);
    const { issuer, id, method } = job.payload;
    this.emit({ type: "cancelled-at-birth", side: issuer, id, method });
    this.answer(job, this.rules.cancelledAnswer(job, "issued under a request that was already being cancelled"));
  }

  // ---- responses --------------------------------------------------------------------

  private onResponse(from: Side, response: JsonRpcResponse): void {
    const issuer = otherSide(from);
    const job = this.tables[issuer].get(response.id);
    if (job === undefined) {
      const late = this.lateReplies[issuer].delete(response.id);
      if (late) {
        this.stats.lateRepliesDropped++;
        this.emit({ type: "late-reply-dropped", side: from, id: response.id });
      }
      // [turn-aftermath] v1: the agent's late answer to a prompt answered for it ends the turn.
      const endedTurn = from === "agent" && this.aftermath.size !== 0 && this.aftermath.lateAnswer(response.id);
      if (!late && !endedTurn) {
        this.emit({
          type: "problem",
          side: from,
          detail: `response to unknown request id ${JSON.stringify(response.id)}`,
        });
      }
      return;
    }
    const record = job.payload;
    record.handlerAnswered = true;
    if (job.state === "running") {
      const answer = record.method === Method.initialize ? this.negotiateAgent(response) : response;
      this.answer(job, answer);
      return;
    }
    this.finishCancelled(job, this.rules.normaliseCancelled(job, response));
  }

  // ---- notifications ----------------------------------------------------------------

  private onNotification(from: Side, message: JsonRpcNotification): void {
    const { method } = message;
    if (method === Method.cancelRequest) {
      this.onCancelRequest(from, message);
      return;
    }
    // [turn-aftermath] updates of a turn already answered cancelled are not forwarded.
    if (from === "agent" && this.aftermath.size !== 0 && method === SESSION_UPDATE) {
      if (this.lateWorkEnd(message.params) || this.aftermath.suppressesUpdate(message.params)) return;
    }
    this.send(otherSide(from), message);
    if (method === Method.sessionCancel && from === "client" && !this.rules.passThrough) {
      const sessionId = sessionIdOf(message.params);
      if (sessionId !== undefined) this.cancelSession(sessionId);
    } else if (method === Method.sessionUpdate && from === "agent") {
      const change = this.rules.workChange(message.params);
      if (change !== undefined) this.onWorkChange(sessionIdOf(message.params), change, message.params);
    }
  }

  private onCancelRequest(from: Side, message: JsonRpcNotification): void {
    const params = message.params as { requestId?: unknown } | undefined;
    const requestId = typeof params === "object" && params !== null ? params.requestId : undefined;
    if (!isJsonRpcId(requestId)) {
      this.emit({
        type: "problem",
        side: from,
        detail: "$/cancel_request without a valid params.requestId: ignored",
      });
      return;
    }
    // Only the issuer's own table is consulted: a cancel can never cross direction.
    const job = this.tables[from].get(requestId);
    if (job === undefined || !job.isRunning) return;
    this.cancelJob(job, "external");
  }

  // ---- cancellation -----------------------------------------------------------------

  private cancelSession(sessionId: string): void {
    const turn = this.turns.get(sessionId);
    if (turn?.isRunning) {
      this.cancelJob(turn, "session");
      // [turn-aftermath] foreground work (v2) has no answer to give: a grace of its own bounds it.
      if (this.aftermath.enabled && isWorkJob(turn)) this.workGrace.start(turn);
    }
    if (!this.rules.promptIsTurn) {
      this.cancelUninsertedPrompts(sessionId);
      return;
    }
    // Permission dialogs and other agent requests of the session that hang under no turn.
    // (The turn's own children are cancelling by now: the first test passes over them.)
    const orphans = this.tables.agent.selectRunning(
      (job) =>
        job.payload.sessionId === sessionId &&
        !this.cleanup.has(job.payload.method) &&
        (!isRequestJob(job.parent) || job.parent.isSettled),
    );
    for (const job of orphans) if (job.isRunning) this.cancelJob(job, "session");
  }

  /** Prompts of the session not answered yet (held or not yet inserted): cancelled with it (v2). */
  private cancelUninsertedPrompts(sessionId: string): void {
    const prompts = this.tables.client.selectRunning(
      (job) => job.payload.method === Method.prompt && job.payload.sessionId === sessionId,
    );
    for (const job of prompts) if (job.isRunning) this.cancelJob(job, "session");
  }

  // ---- turns ------------------------------------------------------------------------

  /** A prompt is the turn itself (v1), or opens the session's foreground work when none is open (v2). */
  private startTurn(sessionId: string, prompt: RequestJob): void {
    if (this.rules.promptIsTurn) this.turns.set(sessionId, prompt);
    else if (!this.rules.passThrough) this.onWorkChange(sessionId, "start", undefined, prompt.payload.id);
  }

  /**
   * A `state_update` (or a prompt) starts foreground work unless some is open, a cancelled
   * one included: updates after `session/cancel` still belong to the work it cancelled.
   * The idle `state_update` ends it.
   */
  private onWorkChange(
    sessionId: string | undefined,
    change: WorkChange,
    params?: unknown,
    promptId: JsonRpcId = null,
  ): void {
    if (sessionId === undefined) return;
    let open = this.turns.get(sessionId);
    if (change === "start") {
      if (open === undefined || open.isSettled) {
        const started = this.aftermath.enabled ? this.now() : undefined;
        open = new Job(new SessionWork(sessionId, promptId, started));
        this.turns.set(sessionId, open);
      }
      if (params !== undefined && open.payload instanceof SessionWork) {
        open.payload.snapshot = (params as { update?: unknown }).update;
      }
      return;
    }
    if (isWorkJob(open)) this.workGrace.stop(open);
    open?.settle();
    this.turns.delete(sessionId);
  }

  /**
   * [turn-aftermath] The grace after `session/cancel` passed and the agent has not reported
   * the work idle: the client is told it is (the version's notice), and the agent's own work
   * is tracked to its real end.
   */
  private workGivenUp(work: WorkJob): void {
    const { sessionId, promptId, startedAt } = work.payload;
    if (work.isSettled || this.turns.get(sessionId) !== work || this.closed.client !== undefined) return;
    if (this.closed.agent !== undefined) return;
    const notice = this.rules.cancelledWorkEnd(sessionId);
    if (notice === undefined) return;
    this.emit({ type: "emulated", side: "client", what: "idle state_update for cancelled work the agent did not end" });
    this.send("client", notice);
    this.aftermath.beginWork(sessionId, promptId, startedAt);
  }

  /**
   * [turn-aftermath] An update that really ends a turn given up on (v2: the idle
   * `state_update`): the work ends, held prompts go on. Not forwarded: the client already
   * had the engine's idle for it. True when it was one.
   */
  private lateWorkEnd(params: unknown): boolean {
    if (this.rules.workChange(params) !== "end") return false;
    const sessionId = sessionIdOf(params);
    if (sessionId === undefined || !this.aftermath.has(sessionId)) return false;
    this.onWorkChange(sessionId, "end");
    this.aftermath.turnEnded(sessionId, "the idle state_update");
    return true;
  }

  private cancelJob(root: AnyJob, reason: CancelReason) {
    // The clocks are read once per cascade, not once per job: a cascade of 1,000 takes
    // about a millisecond, and every job it reaches was cancelled at its start.
    const at: CascadeClock = { now: this.now(), wall: Date.now() };
    // Other bindings' jobs in the subtree are stopped through their own signals.
    return root.cancel(reason, (job) => {
      if (isRequestJob(job)) this.onJobCancelled(job, job === root, at);
    });
  }

  /** Visited deepest first for every job a cancel reaches. */
  private onJobCancelled(job: RequestJob, isRoot: boolean, at: CascadeClock): void {
    const record = job.payload;
    const { issuer, id, method } = record;
    const handler: Side = issuer === "client" ? "agent" : "client";
    const reason = job.reason ?? "internal";
    this.stats.cancels++;
    record.cancelledAt = at.now;
    // No event object is built for nobody (one per job in a cascade).
    if (this.onEvent !== undefined) this.onEvent({ type: "cancel", side: issuer, id, method, reason });
    // [turn-aftermath] a held prompt never reached the agent: nothing to stop, answer now.
    if (!record.delivered && this.aftermath.release(job)) {
      this.finishCancelled(job, this.rules.cancelledAnswer(job));
      return;
    }
    this.stopHandler(job, handler, reason);
    const handlerGone = this.closed[handler];
    if (handlerGone !== undefined) {
      this.finishCancelled(job, abandonedAnswer(id, handlerGone));
      return;
    }
    // A peer of a version we do not know is never answered for: its own answer passes.
    if (this.rules.passThrough && this.closed[issuer] === undefined) return;
    if (
      this.closed[issuer] !== undefined ||
      method === Method.requestPermission ||
      (!isRoot && !this.supportsCancel(handler))
    ) {
      // The answer is already known, or nobody is waiting for it: give it now.
      this.finishCancelled(job, this.rules.cancelledAnswer(job));
      return;
    }
    this.grace.start(job, at.wall);
  }

  /** Tells the handling side to stop, in the words it understands. */
  private stopHandler(job: RequestJob, handler: Side, reason: CancelReason): void {
    const { id, method, sessionId } = job.payload;
    const isTurn = method === Method.prompt;
    // A side known not to speak `$/cancel_request` is not sent one; an unknown side is (it is
    // stable ACP v1 and receivers ignore what they do not support).
    const speaksCancel = this.ports[handler].cancelSupport !== "no";
    if (!isTurn) {
      // Most of a cascade: one `$/cancel_request`, and nothing a turn would need.
      if (speaksCancel) this.send(handler, cancelRequestFor(id));
      return;
    }
    const agentPort = this.ports.agent;
    const agentEndsTurns = agentPort.inProcess !== true && this.negotiated.agent?.sessionCancel === true;
    const sendsCancelRequest = speaksCancel && !(isTurn && reason === "session" && agentEndsTurns);
    if (sendsCancelRequest) this.send(handler, cancelRequestFor(id));
    // An agent that ends turns on `$/cancel_request` and was sent one needs nothing more.
    const agentHeard = agentEndsTurns && sendsCancelRequest;
    const emulate = isTurn && this.rules.promptIsTurn && reason !== "session";
    if (emulate && sessionId !== undefined && !agentPort.inProcess && !agentHeard) {
      // A remote agent that may not know `$/cancel_request` still knows `session/cancel`.
      this.emit({ type: "emulated", side: handler, what: "session/cancel for a cancelled prompt", id });
      this.send(handler, notification(Method.sessionCancel, { sessionId }));
    }
  }

  private graceExpired(job: RequestJob): void {
    const record = job.payload;
    if (job.isSettled) return;
    for (const child of [...job.children]) if (isRequestJob(child)) this.graceExpired(child);
    // The grace bounds the whole subtree: children of other bindings still out do not hold it.
    this.answer(job, record.held ?? this.rules.cancelledAnswer(job));
  }

  /** Answers a cancelled job once its children have settled; until then the answer is held. */
  private finishCancelled(job: RequestJob, response: JsonRpcResponse): void {
    if (job.state === "settled") return;
    if (job.childCount > 0) {
      job.payload.held = response;
      // Children of other bindings settle on their own: the last one out releases the answer.
      // (The engine's own children release it in `answer`, after their answer has left.)
      job.onChildrenSettled ??= (last) => {
        if (!isRequestJob(last) && job.payload.held !== undefined) this.answer(job, job.payload.held);
      };
      return;
    }
    this.answer(job, response);
  }

  // ---- answering --------------------------------------------------------------------

  /** The single place a request gets its one answer. */
  private answer(job: RequestJob, response: JsonRpcResponse): void {
    const record = job.payload;
    if (this.tables[record.issuer].settle(record.id) === undefined) return;
    this.grace.stop(job);
    if (record.delivered && !record.handlerAnswered) {
      this.lateReplies[record.issuer].add(record.id);
      this.stats.answeredForPeer++;
      if (this.onEvent !== undefined) {
        this.onEvent({
          type: "answered-for-peer",
          side: record.issuer,
          id: record.id,
          method: record.method,
          reason: job.reason,
        });
      }
    }
    if (record.cancelledAt !== undefined) {
      this.recordLatency((this.ownClock ? clock.now() : this.now()) - record.cancelledAt);
    }
    // Only a prompt (v1) is ever a session's turn among the engine's jobs: no lookup for the rest.
    if (record.method === Method.prompt && record.sessionId !== undefined && this.turns.get(record.sessionId) === job)
      this.turns.delete(record.sessionId);
    this.send(record.issuer, response);
    // [turn-aftermath] answered for the agent, whose own turn goes on: track it to its real end.
    if (
      record.delivered &&
      !record.handlerAnswered &&
      record.method === Method.prompt &&
      this.rules.realTurnEnd === "prompt-answer" &&
      record.issuer === "client" &&
      this.closed.agent === undefined &&
      this.closed.client === undefined
    ) {
      this.aftermath.begin(job);
    }
    const parent = job.parent;
    if (isRequestJob(parent) && parent.payload.held !== undefined && parent.childCount === 0) {
      this.answer(parent, parent.payload.held);
    }
  }

  private recordLatency(ms: number): void {
    // One path for filling and for wrapping (the cursor is the length until the array is
    // full): a branch first taken at the 4,097th answer deoptimised the whole answer path.
    const at = this.latencyCursor;
    this.cancelLatencies[at] = ms;
    this.latencyCursor = at + 1 === LATENCY_MEMORY ? 0 : at + 1;
  }

  // ---- negotiation ------------------------------------------------------------------

  /**
   * The client's request is written in the version it asks for (none named: the rules in
   * force); a version we do not know passes untouched.
   */
  private negotiateClient(request: JsonRpcRequest): JsonRpcRequest {
    const params = request.params as Record<string, unknown> | undefined;
    const asked = params?.protocolVersion;
    const field = (asked === undefined ? this.rules : rulesFor(asked))?.capabilityField?.client;
    if (field === undefined) return request;
    this.negotiated.client = readCapability(params?.[field]);
    return { ...request, params: withCapability(params ?? {}, field) };
  }

  /** The agent's answer decides the version in force, and with it the rules of this connection. */
  private negotiateAgent(response: JsonRpcResponse): JsonRpcResponse {
    if (!("result" in response)) return response;
    const result = response.result as Record<string, unknown> | undefined;
    const version = result?.protocolVersion;
    // An answer naming no version (invalid in every version) leaves the rules in force.
    if (version !== undefined) {
      const known = rulesFor(version);
      this.rules = known ?? PASS_THROUGH_RULES;
      this.emit({ type: "protocol-version", version, rules: known === undefined ? "pass-through" : `v${String(version)}` });
    }
    const field = this.rules.capabilityField?.agent;
    if (field === undefined) return response;
    this.negotiated.agent = readCapability(result?.[field]);
    return { ...response, result: withCapability(result ?? {}, field) };
  }

  // ---- plumbing ---------------------------------------------------------------------

  private send(side: Side, message: JsonRpcResponse | JsonRpcRequest | JsonRpcNotification): void {
    if (this.closed[side] === undefined) this.deliver(side, message);
  }

  private emit(event: EngineEvent): void {
    this.onEvent?.(event);
  }
}

/** What a port's options alone decide about `$/cancel_request`; undefined: the capability decides. */
function forcedSupport(port: PortOptions): boolean | undefined {
  const forced: CancelSupport = port.cancelSupport ?? "auto";
  if (forced !== "auto") return forced === "yes";
  return port.inProcess === true ? true : undefined;
}

/** The `$/cancel_request` for `requestId`, built as one literal (once per job of a cascade). */
function cancelRequestFor(requestId: JsonRpcId): JsonRpcNotification {
  return { jsonrpc: "2.0", method: Method.cancelRequest, params: { requestId } };
}

/** The clocks as a cascade began: the engine's (`now`, for latencies) and the wall clock (grace). */
interface CascadeClock {
  readonly now: number;
  readonly wall: number;
}

/** A session's foreground work (v2), as opposed to a prompt turn (v1). */
function isWorkJob(job: AnyJob | undefined): job is WorkJob {
  return job?.payload instanceof SessionWork;
}
