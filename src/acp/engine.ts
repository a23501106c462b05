import { type AnyJob, type CancelReason, jobObserver } from "../core/index.js";
import {
  ErrorCode,
  idText,
  errorResponse,
  invalidRequestResponse,
  isJsonRpcId,
  kindOf,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  problemOf,
  validIdOf,
} from "../wire/index.js";
import { abandonedAnswer } from "./cancelled-answers.js";
import type { EngineOptions } from "./engine-options.js";
import { sessionIdOf } from "../wire/acp-shapes.js";
import { Method, otherSide, type Side } from "./methods.js";
import { isRequestJob, type RequestJob, RequestRecord } from "./engine-jobs.js";
import { traceStart, withTraceContext } from "./request-tracing.js";

import { EngineCore } from "./engine-core.js";

/**
 * The ACP cancellation engine: on the path of every JSON-RPC message between a client side and
 * an agent side, one job table per issuer. The placements feed it messages and a `deliver`.
 */
export class CancelEngine extends EngineCore {
  /** Params objects of requests that handlers are about to send, marked with their parent. */
  private readonly nested = new WeakMap<object, RequestJob>();
  private readonly deadlines: ReadonlyMap<string, number>;
  private readonly promptStopsTurn: boolean;

  constructor(
    /** Where the engine sends messages: to the client side or to the agent side. */
    deliver: (side: Side, message: JsonRpcMessage) => void,
    options: EngineOptions = {},
  ) {
    super(deliver, options);
    this.deadlines = new Map(Object.entries(options.deadlines ?? {}));
    this.promptStopsTurn = options.promptStopsTurn === true;
  }

  // ---- what the placements call -------------------------------------------------

  /** A message written by side `from`, on its way to the other side. */
  receive(from: Side, value: unknown): void {
    if (this.closed[from] !== undefined) return; // a gone side's last words change nothing
    const problem = problemOf(value);
    if (problem !== undefined) return this.onInvalid(from, value, problem);
    const kind = kindOf(value as JsonRpcMessage);
    if (kind === "request") this.onRequest(from, value as JsonRpcRequest);
    else if (kind === "response") this.onResponse(from, value as JsonRpcResponse);
    else this.onNotification(from, value as JsonRpcNotification);
  }

  /** A request-shaped mistake is answered to its sender; a response-shaped one answers the request it names. */
  private onInvalid(from: Side, value: unknown, problem: string): void {
    const id = validIdOf(value);
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
      this.answer(job, this.tables[survivor].heldOf(job) ?? abandonedAnswer(job.payload.id, detail));
    }
    for (const job of [...this.tables[side].values()]) this.answer(job, this.negotiation.rules.cancelledAnswer(job, detail));
    this.turns.clear();
    for (const plugin of this.plugins) plugin.closed?.();
  }

  /**
   * Side `issuer` is about to go but can still read: what it is waiting for is cancelled toward the
   * other side and answered now, -32800 naming `detail`; nothing but these answers is sent to it
   * meanwhile. Both sides stay open, so what the other side asked of `issuer` is still answered
   * once, by `issuer` or by a later `close` (decisions.md, "Bridge: pending requests at shutdown").
   */
  answerPending(issuer: Side, detail: string): void {
    if (this.closed[issuer] !== undefined) return;
    this.leaving = issuer; // the cascade's cancels of its own handlers' work would reach it: not sent
    const table = this.tables[issuer];
    try {
      for (const job of [...table.values()]) {
        if (job.isRunning && !this.cleanup.has(job.payload.method)) this.cancelJob(job, "shutdown");
      }
      for (const job of [...table.values()]) this.answer(job, table.heldOf(job) ?? abandonedAnswer(job.payload.id, detail));
    } finally {
      this.leaving = undefined;
    }
  }

  /** Side `side` was replaced by a fresh peer: answered as on close, then open again, nothing negotiated. */
  reopen(side: Side, detail: string): void {
    if (this.closed[side] !== undefined) return;
    this.close(side, detail);
    this.closed[side] = undefined;
    this.negotiation.forget(side);
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
    const job = table.start(new RequestRecord(id, method, sessionId, from), parent) as RequestJob;
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
      if (this.promptStopsTurn && from === "client" && this.negotiation.rules.promptIsTurn && this.turns.turnOf(sessionId)?.isRunning)
        this.stopReplacedTurn(sessionId);
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
    if (from === "client" && method !== Method.prompt) for (const plugin of this.plugins) plugin.requestSent?.(job);
    this.send(otherSide(from), jobObserver === undefined ? outgoing : withTraceContext(job, outgoing));
  }

  /** `promptStopsTurn`: the client's `session/cancel`, as if it had sent one (goose #11651 sends a prompt alone). */
  private stopReplacedTurn(sessionId: string): void {
    this.emit({ type: "emulated", side: "agent", what: "session/cancel before a prompt into a running turn" });
    this.onNotification("client", { jsonrpc: "2.0", method: Method.sessionCancel, params: { sessionId } });
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
      let expected = false;
      if (from === "agent") for (const plugin of this.plugins) expected = plugin.expectedReply?.(response.id) === true || expected;
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
    const { method, sessionId } = job.payload;
    if (method === Method.prompt && sessionId !== undefined && "error" in response) this.turns.promptRefused(sessionId, job);
    if (method === Method.sessionClose && sessionId !== undefined && job.isRunning && "result" in response) this.closedUnderTurn(sessionId);
    if (job.isRunning) this.answer(job, response);
    else this.tables[job.payload.issuer].answerAfterChildren(job, this.negotiation.rules.normaliseCancelled(job, response));
  }

  /**
   * The agent closed the session while the turn it cancelled has not ended (opencode 1.18.33): the session is gone at
   * the agent, so the turn ends for the client now, before the close's answer: v1 its prompt answered cancelled, v2
   * (with `turnEnd`) the idle `state_update` the spec puts before the close's answer.
   */
  private closedUnderTurn(sessionId: string): void {
    // Only a cancelled turn, which its grace bounds (a pass-through peer's never is).
    const turn = this.turns.turnOf(sessionId);
    if (turn?.state !== "cancelling" || this.negotiation.rules.passThrough) return;
    if (!isRequestJob(turn)) {
      for (const plugin of this.plugins) plugin.closedUnderTurn?.(turn);
      return;
    }
    this.emit({ type: "emulated", side: "client", what: "the cancelled prompt's answer before the session/close answer", id: turn.payload.id });
    this.tables.client.endGrace(turn);
  }

  // ---- notifications ----------------------------------------------------------------

  private onNotification(from: Side, message: JsonRpcNotification): void {
    const { method } = message;
    if (method === Method.cancelRequest) {
      this.onCancelRequest(from, message);
      return;
    }
    if (from === "agent" && method === Method.sessionUpdate) {
      const change = this.negotiation.rules.workChange(message.params);
      // Ended before the plug-ins hear of it: a prompt they held may open the next work (v2).
      if (change === "end") this.turns.workChange(sessionIdOf(message.params), change, message.params);
      let drop = false;
      for (const plugin of this.plugins) drop = plugin.dropUpdate?.(message.params) === true || drop;
      if (drop) return;
      this.send("client", message);
      if (change === "start") this.turns.workChange(sessionIdOf(message.params), change, message.params);
      return;
    }
    const sessionId = method === Method.sessionCancel && from === "client" && !this.negotiation.rules.passThrough
      ? sessionIdOf(message.params)
      : undefined;
    // A late Stop (its turn already over) could withdraw the session's next prompt in some agents.
    if (sessionId !== undefined && this.turns.isIdle(sessionId) && !this.hasRequestsOf(sessionId)) {
      this.emit({ type: "idle-cancel-dropped", sessionId });
      return;
    }
    this.send(otherSide(from), message);
    if (sessionId !== undefined) this.turns.cancelSession(sessionId);
  }

  /** A request of `sessionId` is in flight either way, answered or not by its handler. */
  private hasRequestsOf(sessionId: string): boolean {
    for (const side of ["client", "agent"] as const) {
      for (const job of this.tables[side].values()) if (job.payload.sessionId === sessionId) return true;
    }
    return false;
  }

  private onCancelRequest(from: Side, message: JsonRpcNotification): void {
    // `params` is an object or an array, or absent: problemOf checked it.
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (!isJsonRpcId(requestId)) {
      this.emit({ type: "problem", side: from, detail: "$/cancel_request without a valid params.requestId: ignored" });
      return;
    }
    // Only the issuer's own table is consulted: a cancel can never cross direction.
    const job = this.tables[from].get(requestId);
    if (job?.isRunning === true) this.cancelJob(job, "external");
  }
}
