import { type AnyJob, type CancelReason, ServerCalls, sharedGrace } from "../core/index.js";
import {
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../wire/index.js";
import { abandonedAnswer } from "./cancelled-answers.js";
import type { CancellationCapability } from "./capability.js";
import { DEFAULT_GRACE_MS, type EngineEvent, type EngineOptions, type PortOptions } from "./engine-options.js";
import { LatencyRing } from "./engine-stats.js";
import { cleanupMethodSet, Method, type Side } from "./methods.js";
import { Negotiation } from "./negotiation.js";
import { type RequestJob, RequestRecord } from "./engine-jobs.js";
import { failureOf, withTraceContext } from "./request-tracing.js";
import { SessionTurns } from "./session-turns.js";
import { type AftermathStats, noTurnsFollowed, TurnAftermath } from "./turn-aftermath.js";
import type { EngineHost, TurnPlugin } from "./turn-plugin.js";

/** How many unanswered-by-peer ids to remember so their late replies are dropped. */
const LATE_REPLY_MEMORY = 4096;

/**
 * The engine's state and its answering half: the job tables on core's lifecycle, what a cancel
 * does to a request, the one answer each request gets, the turn plug-ins. The message handlers
 * are in engine.ts.
 */
export abstract class EngineCore {
  /** Per issuer, the requests it is owed an answer for. */
  protected readonly tables: Record<Side, ServerCalls<JsonRpcId, RequestRecord, JsonRpcResponse>>;
  protected readonly turns: SessionTurns;
  protected readonly negotiation: Negotiation;
  protected readonly ports: Record<Side, PortOptions>;
  /** Why each side is gone; undefined while it is open. */
  protected readonly closed: Record<Side, string | undefined> = { client: undefined, agent: undefined };
  /** The one clock reading of the cascade under way, if the engine started it. */
  protected cascadeAt: number | undefined = undefined;
  /** The side whose pending requests `answerPending` is answering: it is going, only answers reach it. */
  protected leaving: Side | undefined = undefined;
  /** True while the engine cancels jobs it answers itself (a refusal, a close). */
  protected muted = false;
  /** Requests that stop or free something: never nested, so never cancelled for anyone. */
  protected readonly cleanup: ReadonlySet<string>;
  protected readonly onEvent: ((event: EngineEvent) => void) | undefined;
  protected readonly now: () => number;
  /** What decides about a turn's messages (docs/decisions.md, "Turn plug-ins"), in order. */
  protected readonly plugins: readonly TurnPlugin[];
  /** Counters for summaries and benchmarks. */
  readonly stats = { requests: 0, cancels: 0, answeredForPeer: 0, cancelledAtBirth: 0, lateRepliesDropped: 0 };
  protected readonly latencies = new LatencyRing();

  constructor(
    /** Where the engine sends messages: to the client side or to the agent side. */
    private readonly deliver: (side: Side, message: JsonRpcMessage) => void,
    options: EngineOptions = {},
  ) {
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    const grace = sharedGrace(graceMs);
    this.tables = { client: this.owedTable(grace), agent: this.owedTable(grace) };
    this.cleanup = cleanupMethodSet(options.cleanupMethods);
    this.ports = { client: options.client ?? {}, agent: options.agent ?? {} };
    this.negotiation = new Negotiation((event) => this.emit(event), this.ports);
    this.onEvent = options.onEvent;
    this.now = options.now ?? (() => performance.now());
    const host: EngineHost = {
      rules: () => this.negotiation.rules,
      now: () => this.now(),
      emit: (event) => this.emit(event),
      isOpen: (side) => this.closed[side] === undefined,
      running: (side, test) =>
        this.tables[side].selectRunning((job) => !this.cleanup.has(job.payload.method) && test(job)) as RequestJob[],
      cancel: (job, reason) => this.cancelJob(job, reason),
      forward: (job, request) => this.forwardHeldPrompt(job, request),
      answer: (job, response) => this.answer(job, response),
      notify: (side, message) => this.send(side, message),
    };
    const { turnEnd } = options;
    const aftermath = turnEnd === undefined ? [] : [new TurnAftermath(host, turnEnd, graceMs)];
    this.plugins = [...aftermath, ...(options.plugins ?? [])];
    this.turns = new SessionTurns(host, this.plugins);
  }

  /** One issuer's requests on core's lifecycle: the engine supplies ACP's part. */
  protected owedTable(grace: ReturnType<typeof sharedGrace>): ServerCalls<JsonRpcId, RequestRecord, JsonRpcResponse> {
    const protocol = {
      keyOf: (record: RequestRecord) => record.id,
      cancelled: (job: RequestJob, origin: string) => this.onJobCancelled(job, origin !== "parent"),
      graceEnded: (job: RequestJob) => this.negotiation.rules.cancelledAnswer(job),
      forPeer: (job: RequestJob) => job.payload.delivered && !job.payload.handlerAnswered,
      send: (job: RequestJob, response: JsonRpcResponse, forPeer: boolean) => this.answered(job, response, forPeer),
      failureOf,
    };
    return new ServerCalls(protocol, { grace, rememberMax: LATE_REPLY_MEMORY });
  }

  /** Milliseconds from a cancel reaching a job to its answer leaving (the last 4096, in no order), for summaries. */
  get cancelLatencies(): readonly number[] {
    return this.latencies.values;
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

  // ---- cancellation -----------------------------------------------------------------

  protected cancelJob(root: AnyJob, reason: CancelReason) {
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
  protected cancelQuietly(job: RequestJob, reason: CancelReason): void {
    const muted = this.muted;
    this.muted = true;
    try {
      job.cancel(reason);
    } finally {
      this.muted = muted;
    }
  }

  /** Visited deepest first for every job a cancel reaches. */
  protected onJobCancelled(job: RequestJob, isRoot: boolean): void {
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
    for (const message of this.negotiation.stopMessages(job, handler, reason)) {
      if (message.method === Method.sessionCancel) this.emit({ type: "emulated", side: handler, what: "session/cancel for a cancelled prompt", id });
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
    if (isRoot && reason === "deadline") {
      // Answered at the deadline itself; the handler's late reply is dropped (its turn, if any, followed).
      owed.endGrace(job);
      return;
    }
    owed.startGrace(job);
  }

  // ---- answering --------------------------------------------------------------------

  /** Gives `job` its one answer (core's lifecycle keeps it to one). */
  protected answer(job: RequestJob, response: JsonRpcResponse): void {
    this.tables[job.payload.issuer].answer(job, response);
  }

  /** The answer is settled and goes to the issuer now. */
  protected answered(job: RequestJob, response: JsonRpcResponse, answeredForPeer: boolean): void {
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
    for (const plugin of this.plugins) plugin.answered?.(job, answer, answeredForPeer);
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

  // ---- plumbing ---------------------------------------------------------------------

  protected send(side: Side, message: JsonRpcResponse | JsonRpcRequest | JsonRpcNotification): void {
    if (this.closed[side] !== undefined) return;
    if (this.leaving === side && "method" in message) return; // a leaving side is sent its answers only
    this.deliver(side, message);
  }

  protected emit(event: EngineEvent): void {
    this.onEvent?.(event);
    for (const plugin of this.plugins) plugin.event?.(event);
  }
}
