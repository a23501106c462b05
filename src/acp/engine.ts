import { type AnyJob, type CancelReason, jobObserver, OwedAnswers, sharedGrace } from "../core/index.js";
import {
  classify,
  ErrorCode,
  idText,
  kindOf,
  errorResponse,
  invalidRequestResponse,
  isJsonRpcId,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../wire/index.js";
import { abandonedAnswer } from "./cancelled-answers.js";
import type { CancellationCapability } from "./capability.js";
import { DEFAULT_GRACE_MS, type EngineEvent, type EngineOptions, type PortOptions } from "./engine-options.js";
import type { EngineHost } from "./engine-host.js";
import { type AftermathStats, EngineStats, LatencyRing, noTurnsFollowed } from "./engine-stats.js";
import { sessionIdOf } from "../wire/acp-shapes.js";
import { cleanupMethodSet, Method, otherSide, type Side } from "./methods.js";
import { Negotiation } from "./negotiation.js";
import { type RequestJob, RequestRecord } from "./engine-jobs.js";
import { failureOf, traceStart, withTraceContext } from "./request-tracing.js";
import { stopMessages } from "./stop-handler.js";
import { SessionTurns } from "./session-turns.js";
import { TurnAftermath } from "./turn-aftermath.js";
import type { TurnPlugin } from "./turn-plugin.js";

/** How many unanswered-by-peer ids to remember so their late replies are dropped. */
const LATE_REPLY_MEMORY = 4096;

/**
 * The ACP cancellation engine: on the path of every JSON-RPC message between a client side and
 * an agent side, one job table per issuer. The placements feed it messages and a `deliver`.
 */
export class CancelEngine {
  /** Per issuer, the requests it is owed an answer for. */
  private readonly tables: Record<Side, OwedAnswers<JsonRpcId, RequestRecord, JsonRpcResponse>>;
  private readonly turns: SessionTurns;
  private readonly negotiation = new Negotiation((event) => this.emit(event));
  /** Params objects of requests that handlers are about to send, marked with their parent. */
  private readonly nested = new WeakMap<object, RequestJob>();
  private readonly ports: Record<Side, PortOptions>;
  /** Why each side is gone; undefined while it is open. */
  private readonly closed: Record<Side, string | undefined> = { client: undefined, agent: undefined };
  /** The one clock reading of the cascade under way, if the engine started it. */
  private cascadeAt: number | undefined = undefined;
  /** True while the engine cancels jobs it answers itself (a refusal, a close). */
  private muted = false;
  private readonly deadlines: ReadonlyMap<string, number>;
  /** Requests that stop or free something: never nested, so never cancelled for anyone. */
  private readonly cleanup: ReadonlySet<string>;
  private readonly onEvent: ((event: EngineEvent) => void) | undefined;
  private readonly now: () => number;
  /** What decides about a turn's messages (docs/decisions.md, "Turn plug-ins"), in order. */
  private readonly plugins: readonly TurnPlugin[];
  readonly stats = new EngineStats();
  private readonly latencies = new LatencyRing();

  constructor(
    /** Where the engine sends messages: to the client side or to the agent side. */
    private readonly deliver: (side: Side, message: JsonRpcMessage) => void,
    options: EngineOptions = {},
  ) {
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    const grace = sharedGrace(graceMs);
    this.tables = { client: this.owedTable(grace), agent: this.owedTable(grace) };
    this.deadlines = new Map(Object.entries(options.deadlines ?? {}));
    this.cleanup = cleanupMethodSet(options.cleanupMethods);
    this.ports = { client: options.client ?? {}, agent: options.agent ?? {} };
    this.onEvent = options.onEvent;
    this.now = options.now ?? (() => performance.now());
    const host: EngineHost = {
      rules: () => this.negotiation.rules,
      now: () => this.now(),
      emit: (event) => this.emit(event),
      isOpen: (side) => this.closed[side] === undefined,
      isCleanup: (method) => this.cleanup.has(method),
      turnOf: (sessionId) => this.turns.get(sessionId),
      running: (side, test) => this.tables[side].selectRunning(test) as RequestJob[],
      cancel: (job, reason) => this.cancelJob(job, reason),
      forward: (job, request) => this.forwardHeldPrompt(job, request),
      answer: (job, response) => this.answer(job, response),
      notify: (side, message) => this.send(side, message),
      endWork: (sessionId) => this.turns.workChange(sessionId, "end"),
    };
    const { turnEnd } = options;
    const aftermath = turnEnd === undefined ? [] : [new TurnAftermath(host, turnEnd, graceMs)];
    this.plugins = [...aftermath, ...(options.plugins ?? []).map((make) => make(host, graceMs))];
    this.turns = new SessionTurns(host, this.plugins);
  }

  /** One issuer's requests on core's lifecycle: the engine supplies ACP's part. */
  private owedTable(grace: ReturnType<typeof sharedGrace>): OwedAnswers<JsonRpcId, RequestRecord, JsonRpcResponse> {
    const protocol = {
      keyOf: (job: RequestJob) => job.payload.id,
      cancelled: (job: RequestJob, origin: string) => this.onJobCancelled(job, origin !== "parent"),
      graceAnswer: (job: RequestJob) => this.negotiation.rules.cancelledAnswer(job),
      forPeer: (job: RequestJob) => job.payload.delivered && !job.payload.handlerAnswered,
      send: (job: RequestJob, response: JsonRpcResponse, forPeer: boolean) => this.answered(job, response, forPeer),
      failureOf,
    };
    return new OwedAnswers(protocol, grace, LATE_REPLY_MEMORY);
  }

  /** Milliseconds from a cancel reaching a job to its answer leaving (the last 4096), for summaries. */
  get cancelLatencies(): readonly number[] {
    return this.latencies.values;
  }

  // ---- what the placements call -------------------------------------------------

  /** A message written by side `from`, on its way to the other side. */
  receive(from: Side, value: unknown): void {
    if (this.closed[from] !== undefined) return; // a gone side's last words change nothing
    const kind = kindOf(value);
    if (kind === "request") this.onRequest(from, value as JsonRpcRequest);
    else if (kind === "response") this.onResponse(from, value as JsonRpcResponse);
    else if (kind === "notification") this.onNotification(from, value as JsonRpcNotification);
    else {
      const classified = classify(value);
      if (classified.kind === "invalid") this.onInvalid(from, value, classified.problem, classified.id);
    }
  }

  /** A request-shaped mistake is answered to its sender; a response-shaped one answers the request it names. */
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
    // A cancelled request is answered like every cancelled request, however garbled the reply.
    this.handlerAnswered(job, errorResponse(id, ErrorCode.InternalError, `Invalid response from the peer: ${problem}`));
  }

  /** Side `side` is gone: what it owed is answered naming `detail`; what it asked for is cancelled. */
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
      this.cancelQuietly(job, "shutdown");
      // An answer already given (held for nested requests) stands; otherwise name the loss.
      this.answer(job, job.held ?? abandonedAnswer(job.payload.id, detail));
    }
    for (const job of [...this.tables[side].values()]) this.answer(job, this.negotiation.rules.cancelledAnswer(job, detail));
    this.turns.clear();
    for (const plugin of this.plugins) plugin.closed?.();
  }

  /** Side `side` was replaced by a fresh peer: answered as on close, then open again, nothing negotiated. */
  reopen(side: Side, detail: string): void {
    if (this.closed[side] !== undefined) return;
    this.close(side, detail);
    this.closed[side] = undefined;
    this.negotiation.forget(side);
  }

  /** Counters of the turns tracked past their synthetic answer (zero unless `turnEnd` is set). */
  get aftermathStats(): Readonly<AftermathStats> {
    const aftermath = this.plugins.find((plugin) => plugin instanceof TurnAftermath);
    return aftermath?.stats ?? noTurnsFollowed();
  }

  /** Cancels a request issued by `issuer` from inside (an app's own decision). */
  cancel(issuer: Side, id: JsonRpcId, reason: CancelReason = "internal") {
    const job = this.tables[issuer].get(id);
    return job === undefined ? "not-found" : this.cancelJob(job, reason);
  }

  /** The in-flight job for a request `issuer` sent, if any. */
  job(issuer: Side, id: JsonRpcId): RequestJob | undefined {
    return this.tables[issuer].get(id);
  }

  /** The capability each side advertised at `initialize` (undefined: none seen). */
  get peerCapabilities(): Readonly<Record<Side, CancellationCapability | undefined>> {
    return this.negotiation.capabilities;
  }

  /** Requests in flight per issuer; both are zero at quiescence. */
  get inFlight(): Readonly<Record<Side, number>> {
    return { client: this.tables.client.size, agent: this.tables.agent.size };
  }

  /** True when a side honours `$/cancel_request` (forced, in process, or advertised). */
  supportsCancel(side: Side): boolean {
    const { cancelSupport = "auto", inProcess } = this.ports[side];
    if (cancelSupport !== "auto") return cancelSupport === "yes";
    return inProcess === true || this.negotiation.capabilities[side]?.cancelRequest === true;
  }

  // ---- requests ---------------------------------------------------------------------

  private onRequest(from: Side, request: JsonRpcRequest): void {
    const table = this.tables[from];
    const { id, method } = request;
    if (table.get(id) !== undefined) {
      const problem = `request id ${idText(id)} is already in flight`;
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
    const refusal = from === "agent" && sessionId !== undefined ? this.refusal(request, sessionId) : undefined;
    const orphan = refusal !== undefined || this.cleanup.has(method);
    const parent = orphan ? undefined : this.parentFor(from, method, request.params, sessionId);
    const job = table.start(id, new RequestRecord(id, method, sessionId, from), parent) as RequestJob;
    if (jobObserver !== undefined) traceStart(job, request, this.ports[otherSide(from)].inProcess === true);
    if (refusal !== undefined) {
      this.refuse(job, "session", refusal);
      return;
    }
    if (parent?.isDoomed) {
      this.stats.cancelledAtBirth++;
      this.emit({ type: "cancelled-at-birth", side: from, id, method });
      this.refuse(job, parent.cause ?? "internal", "issued under a request that was already being cancelled");
      return;
    }
    let outgoing: JsonRpcRequest = request;
    let held = false;
    if (method === Method.initialize && from === "client") outgoing = this.negotiation.clientInitialize(request);
    else if (method === Method.prompt && sessionId !== undefined) {
      this.turns.start(sessionId, job);
      held = from === "client" && this.plugins.some((plugin) => plugin.hold?.(job, request) === true);
      if (!held) for (const plugin of this.plugins) plugin.promptSent?.(job);
    } else if (method === Method.sessionClose && sessionId !== undefined && !this.negotiation.rules.passThrough)
      this.turns.cancelSession(sessionId);
    const deadline = this.deadlines.get(method);
    if (deadline !== undefined && !job.isSettled) {
      job.setDeadline(deadline, (expired) => this.cancelJob(expired, "deadline"));
    }
    if (held) return;
    job.payload.delivered = true;
    this.send(otherSide(from), jobObserver === undefined ? outgoing : withTraceContext(job, outgoing));
  }

  /** Why the first plug-in that refuses an agent request of `sessionId` does, or undefined. */
  private refusal(request: JsonRpcRequest, sessionId: string): string | undefined {
    for (const plugin of this.plugins) {
      const why = plugin.refuse?.(request, sessionId);
      if (why !== undefined) return why;
    }
    return undefined;
  }

  /** Nested requests belong to the handler that made them, else to their session's turn. */
  private parentFor(from: Side, method: string, params: unknown, sessionId: string | undefined): AnyJob | undefined {
    if (typeof params === "object" && params !== null) {
      const marked = this.nested.get(params);
      if (marked !== undefined && !marked.isSettled && marked.payload.issuer !== from) return marked;
    }
    return from === "agent" && sessionId !== undefined ? this.turns.parentOf(method, params, sessionId) : undefined;
  }

  /** Marks `params` as a request `job`'s handler is about to send (read when it passes `receive`). */
  nestUnder(params: object, job: RequestJob): void {
    this.nested.set(params, job);
  }

  /** A request that never reaches its handler: cancelled as it arrives, and answered so at once. */
  private refuse(job: RequestJob, reason: CancelReason, detail: string): void {
    this.cancelQuietly(job, reason);
    this.answer(job, this.negotiation.rules.cancelledAnswer(job, detail));
  }

  /** A held prompt goes to the agent now: the turn before it really ended. */
  private forwardHeldPrompt(job: RequestJob, request: JsonRpcRequest): void {
    const gone = this.closed.agent;
    if (gone !== undefined) {
      this.answer(job, abandonedAnswer(job.payload.id, gone));
      return;
    }
    job.payload.delivered = true;
    const { sessionId } = job.payload;
    if (sessionId !== undefined) this.turns.start(sessionId, job); // v2: the old work ended, new work opens
    for (const plugin of this.plugins) plugin.promptSent?.(job);
    this.send("agent", withTraceContext(job, request));
  }

  // ---- responses --------------------------------------------------------------------

  private onResponse(from: Side, response: JsonRpcResponse): void {
    const issuer = otherSide(from);
    const job = this.tables[issuer].get(response.id);
    if (job === undefined) {
      const late = this.tables[issuer].dropLate(response.id);
      if (late) {
        this.stats.lateRepliesDropped++;
        this.emit({ type: "late-reply-dropped", side: from, id: response.id });
      }
      const expected = from === "agent" && this.plugins.some((plugin) => plugin.expectedReply?.(response.id) === true);
      if (!late && !expected) {
        this.emit({ type: "problem", side: from, detail: `response to unknown request id ${idText(response.id)}` });
      }
      return;
    }
    const initialized = job.isRunning && job.payload.method === Method.initialize;
    this.handlerAnswered(job, initialized ? this.negotiation.agentInitialize(response) : response);
  }

  /** The handler's answer: passed on, or normalised when the request was cancelled meanwhile. */
  private handlerAnswered(job: RequestJob, response: JsonRpcResponse): void {
    job.payload.handlerAnswered = true;
    if (job.isRunning) this.answer(job, response);
    else this.tables[job.payload.issuer].answerAfterChildren(job, this.negotiation.rules.normaliseCancelled(job, response));
  }

  // ---- notifications ----------------------------------------------------------------

  private onNotification(from: Side, message: JsonRpcNotification): void {
    const { method } = message;
    if (method === Method.cancelRequest) {
      this.onCancelRequest(from, message);
      return;
    }
    if (from === "agent" && method === Method.sessionUpdate && this.plugins.some((plugin) => plugin.dropUpdate?.(message.params) === true)) return;
    this.send(otherSide(from), message);
    if (method === Method.sessionCancel && from === "client" && !this.negotiation.rules.passThrough) {
      const sessionId = sessionIdOf(message.params);
      if (sessionId !== undefined) this.turns.cancelSession(sessionId);
    } else if (method === Method.sessionUpdate && from === "agent") {
      const change = this.negotiation.rules.workChange(message.params);
      if (change !== undefined) this.turns.workChange(sessionIdOf(message.params), change, message.params);
    }
  }

  private onCancelRequest(from: Side, message: JsonRpcNotification): void {
    // `params` is an object or an array, or absent: kindOf checked it.
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (!isJsonRpcId(requestId)) {
      this.emit({ type: "problem", side: from, detail: "$/cancel_request without a valid params.requestId: ignored" });
      return;
    }
    // Only the issuer's own table is consulted: a cancel can never cross direction.
    const job = this.tables[from].get(requestId);
    if (job?.isRunning === true) this.cancelJob(job, "external");
  }

  // ---- cancellation -----------------------------------------------------------------

  private cancelJob(root: AnyJob, reason: CancelReason) {
    // One clock reading per cascade; other bindings' jobs in it stop through their own signals.
    const outer = this.cascadeAt === undefined;
    if (outer) this.cascadeAt = this.now();
    try {
      return root.cancel(reason);
    } finally {
      if (outer) this.cascadeAt = undefined;
    }
  }

  /** Cancels a job the caller answers itself: the engine's cancel rules stay out of it. */
  private cancelQuietly(job: RequestJob, reason: CancelReason): void {
    const muted = this.muted;
    this.muted = true;
    try {
      job.cancel(reason);
    } finally {
      this.muted = muted;
    }
  }

  /** Visited deepest first for every job a cancel reaches. */
  private onJobCancelled(job: RequestJob, isRoot: boolean): void {
    if (this.muted) return;
    const record = job.payload;
    const owed = this.tables[record.issuer];
    const { issuer, id, method } = record;
    const handler: Side = issuer === "client" ? "agent" : "client";
    const reason = job.reason ?? "internal";
    this.stats.cancels++;
    record.cancelledAt = this.cascadeAt ?? this.now();
    this.emit({ type: "cancel", side: issuer, id, method, reason });
    // A held prompt never reached the agent: nothing to stop, answer now.
    if (!record.delivered && this.plugins.some((plugin) => plugin.release?.(job) === true)) {
      owed.answerAfterChildren(job, this.negotiation.rules.cancelledAnswer(job));
      return;
    }
    const stop = stopMessages(job, handler, reason, this.ports, this.negotiation);
    for (const message of stop.messages) {
      if (message === stop.emulated) this.emit({ type: "emulated", side: handler, what: "session/cancel for a cancelled prompt", id });
      this.send(handler, message);
    }
    const handlerGone = this.closed[handler];
    if (handlerGone !== undefined) {
      owed.answerAfterChildren(job, abandonedAnswer(id, handlerGone));
      return;
    }
    // A peer of a version we do not know is never answered for: its own answer passes.
    if (this.negotiation.rules.passThrough && this.closed[issuer] === undefined) return;
    if (
      this.closed[issuer] !== undefined ||
      method === Method.requestPermission ||
      (!isRoot && !this.supportsCancel(handler))
    ) {
      // The answer is already known, or nobody is waiting for it: give it now.
      owed.answerAfterChildren(job, this.negotiation.rules.cancelledAnswer(job));
      return;
    }
    owed.startGrace(job);
  }

  // ---- answering --------------------------------------------------------------------

  /** Gives `job` its one answer (core's lifecycle keeps it to one). */
  private answer(job: RequestJob, response: JsonRpcResponse): void {
    this.tables[job.payload.issuer].answer(job, response);
  }

  /** The answer is settled and goes to the issuer now. */
  private answered(job: RequestJob, response: JsonRpcResponse, answeredForPeer: boolean): void {
    const record = job.payload;
    if (answeredForPeer) {
      this.stats.answeredForPeer++;
      this.emit({ type: "answered-for-peer", side: record.issuer, id: record.id, method: record.method, reason: job.reason });
    }
    if (record.cancelledAt !== undefined) this.latencies.record(this.now() - record.cancelledAt);
    // Only a prompt (v1) is ever a session's turn among the engine's jobs: no lookup for the rest.
    if (record.method === Method.prompt && record.sessionId !== undefined) this.turns.promptAnswered(record.sessionId, job);
    let answer = response;
    for (const plugin of this.plugins) if (plugin.answer !== undefined) answer = plugin.answer(job, answer, answeredForPeer);
    this.send(record.issuer, answer);
    for (const plugin of this.plugins) plugin.answered?.(job, answeredForPeer);
  }

  // ---- plumbing ---------------------------------------------------------------------

  private send(side: Side, message: JsonRpcResponse | JsonRpcRequest | JsonRpcNotification): void {
    if (this.closed[side] === undefined) this.deliver(side, message);
  }

  private emit(event: EngineEvent): void {
    this.onEvent?.(event);
  }
}
