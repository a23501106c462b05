/**
 * The agent side of ABP, for every transport, on core's call lifecycle: an AbortSignal, a timeout, a cancelled parent
 * job or a shutdown cancels a call, which sends `capabilities/cancel` and waits for the app's answer at most `graceMs`.
 */
import { type AnyJob, traceCarrier } from "../core/index.js";
import { type Call, type CallProtocol, Calls, type CancelOrigin, doomedBy } from "../core/call.js";
import { GraceTimers } from "../core/grace-timers.js";
import { type CallRequest, type InitializeParams, PROTOCOL_VERSION } from "./app/protocol.js";
import { randomCallId } from "./call-id.js";
import { AbpClosedError, AbpProtocolError, type AbpTransport } from "./envelope-channel.js";
import type { CallResult, CancelResult, InitializeResult, ProgressPayload } from "./schemas.js";

/** What ended a call early, as the agent side saw it (the app cannot tell them apart). */
export type CancelCause = "abort" | "timeout" | "parent" | "cancel" | "shutdown";

export interface AbpCallOptions {
  /** Aborting it cancels the call, as with fetch. */
  signal?: AbortSignal;
  /** Milliseconds; when they pass the call is cancelled exactly as by the signal. */
  timeout?: number;
  /** Default: a random (version 4) UUID. */
  callId?: string;
  progressToken?: string | number;
  onProgress?: (progress: ProgressPayload) => void;
  /** The job this call runs under (of any binding): cancelling it cancels the call. */
  parent?: AnyJob;
  /** Told of the app's acknowledgement when this call is cancelled. */
  onCancelAcknowledged?: (ack: CancelResult, cause: CancelCause) => void;
}

/** The app's answer, with the callId and, for a call this side cancelled, what cancelled it. */
export type AbpCallResult = CallResult & {
  callId: string;
  cancelledBy?: CancelCause;
  /** The app had not answered the cancel within the grace period: the call was settled here. */
  unconfirmed?: true;
};

interface AbpCall {
  callId: string;
  /** Set when the call is cancelled from this side. */
  cause: CancelCause | undefined;
}

export interface AbpClientOptions {
  agent?: InitializeParams["agent"];
  /** How long a cancelled call waits for the app's answer before it is settled here. Default: core's `DEFAULT_GRACE_MS`. */
  graceMs?: number;
  /** Told of problems that belong to no call (a cancel that could not be sent…). */
  onError?: (error: Error) => void;
}

/** The ABP cause of a cancel, from the link that cancelled the call. */
const ORIGIN_CAUSE: Record<CancelOrigin, CancelCause> = {
  signal: "abort",
  deadline: "timeout",
  parent: "parent",
  call: "cancel",
};

export class AbpClient {
  /** Calls in flight, keyed by callId. Empty at quiescence. */
  readonly calls: Calls<AbpCall, AbpCallResult, string>;
  /** Cancels waiting for the app's acknowledgement, each given up (and forgotten) when the grace ends. */
  private readonly acks: GraceTimers<AbortController>;
  private shuttingDown = false;

  constructor(
    readonly transport: AbpTransport,
    private readonly options: AbpClientOptions = {},
  ) {
    this.calls = new Calls({ graceMs: options.graceMs });
    this.acks = new GraceTimers(this.calls.graceMs, (waiting) => waiting.abort(new AbpClosedError("no acknowledgement within the grace period")));
  }

  initialize(params: Pick<InitializeParams, "requestedCapabilities" | "features"> = {}): Promise<InitializeResult> {
    return this.transport.request("initialize", {
      agent: this.options.agent ?? { name: "acp-cancel", version: "0.1.0" },
      protocolVersion: PROTOCOL_VERSION,
      ...params,
    });
  }

  call(capability: string, params?: Record<string, unknown>, options: AbpCallOptions = {}): Promise<AbpCallResult> {
    const closed = this.transport.closedWith;
    if (closed !== undefined) return Promise.reject(closed);
    const callId = options.callId ?? randomCallId();
    if (this.calls.get(callId) !== undefined) {
      return Promise.reject(new AbpProtocolError("DUPLICATE_CALL_ID", `a call with callId "${callId}" is already in flight`));
    }
    // Cancelled before it was sent: it is skipped, as the spec has the app skip a call not yet started.
    const links = { parent: options.parent, signal: options.signal, timeoutMs: options.timeout };
    if (doomedBy(links) !== undefined) {
      const early: CancelCause = options.signal?.aborted === true ? "abort" : "parent";
      return Promise.resolve({ success: false, cancelled: true, callId, cancelledBy: early });
    }
    // The transport forgets the request once the call settles without its answer.
    const sent = new AbortController();
    let answered = false;
    const protocol: CallProtocol<AbpCall, AbpCallResult> = {
      sendCancel: (call) => {
        const payload = call.payload;
        payload.cause ??= ORIGIN_CAUSE[call.origin ?? "parent"];
        // `cancel()` sends its own capabilities/cancel (its caller awaits the answer); a shutdown sends none.
        if (payload.cause !== "cancel" && !this.shuttingDown) void this.sendCancel(callId, payload.cause, options.onCancelAcknowledged);
      },
      graceEnded: (call) => {
        const settled: AbpCallResult = { success: false, cancelled: true, callId, cancelledBy: call.payload.cause ?? "parent" };
        if (!this.shuttingDown) settled.unconfirmed = true;
        call.resolve(settled);
      },
      cleanup: () => {
        if (!answered) sent.abort(new AbpClosedError(`call ${callId} settled`));
      },
      describe: () => ({ protocol: "abp", method: capability, id: callId, kind: "client" }),
    };
    const payload: AbpCall = { callId, cause: undefined };
    const call = this.calls.start(payload, links, protocol, callId) as Call<AbpCall, AbpCallResult>;
    const request: CallRequest = { capability, callId };
    if (params !== undefined) request.params = params;
    if (options.progressToken !== undefined) request.options = { progressToken: options.progressToken };
    // docs/decisions.md, "ABP: the trace context of a call".
    const meta = traceCarrier(call.job);
    if (meta !== undefined) request.options = { ...request.options, _meta: meta };
    this.transport.request("capabilities/call", request, sent.signal, options.onProgress).then(
      (result) => {
        answered = true;
        const cancelledBy = result.cancelled === true ? payload.cause : undefined;
        call.resolve(cancelledBy === undefined ? { ...result, callId } : { ...result, callId, cancelledBy });
      },
      (error: unknown) => {
        answered = true;
        call.reject(error);
      },
    );
    return call.promise;
  }

  /**
   * Cancels a call by id (one of ours or not) and returns the app's acknowledgement; without one within
   * the grace period, rejects with an AbpClosedError and forgets the request.
   */
  async cancel(callId: string, reason?: string): Promise<CancelResult> {
    const call = this.calls.get(callId);
    if (call !== undefined && call.job.isRunning) {
      call.payload.cause = "cancel";
      call.cancel("external");
    }
    const waiting = new AbortController();
    this.acks.start(waiting);
    try {
      return await this.transport.request("capabilities/cancel", reason === undefined ? { callId } : { callId, reason }, waiting.signal);
    } finally {
      this.acks.stop(waiting);
    }
  }

  /**
   * Ends the session: pending calls settle at once as cancelled by "shutdown" (the app cancels its side); late answers drop.
   * Rejects with an AbpClosedError when the app has not taken the shutdown within the grace period.
   */
  async shutdown(reason?: string): Promise<void> {
    this.shuttingDown = true;
    try {
      for (const call of [...this.calls.values()]) {
        call.payload.cause ??= "shutdown";
        call.cancel("shutdown");
        call.endGrace();
      }
      if (this.transport.closedWith !== undefined) return;
      await this.withinGrace(this.transport.shutdown(reason === undefined ? {} : { reason }));
    } finally {
      this.shuttingDown = false;
    }
  }

  /** `sent`, given up with an AbpClosedError once the grace period passes (an app that never takes it: a hung page). */
  private async withinGrace(sent: Promise<void>): Promise<void> {
    const waiting = new AbortController();
    const givenUp = new Promise<never>((_, reject) => {
      waiting.signal.addEventListener("abort", () => reject(waiting.signal.reason as Error));
    });
    sent.catch(() => {}); // given up, its later failure is nobody's
    this.acks.start(waiting);
    try {
      await Promise.race([sent, givenUp]);
    } finally {
      this.acks.stop(waiting);
    }
  }

  /** Shuts down (if still open) and closes the transport; pending calls settle first. */
  async close(): Promise<void> {
    if (this.transport.closedWith === undefined) await this.shutdown("client closed").catch(() => {});
    await this.transport.close();
  }

  private async sendCancel(callId: string, cause: CancelCause, onAck: AbpCallOptions["onCancelAcknowledged"]): Promise<void> {
    const waiting = new AbortController();
    this.acks.start(waiting);
    try {
      // No reason is sent: an abort, a timeout and a parent's cancel look the same to the app.
      const ack = await this.transport.request("capabilities/cancel", { callId }, waiting.signal);
      onAck?.(ack, cause);
    } catch (error) {
      // The call itself settles through its own answer, the channel closing, or the grace period.
      if (!(error instanceof AbpClosedError)) this.options.onError?.(error as Error);
    } finally {
      this.acks.stop(waiting);
    }
  }
}
