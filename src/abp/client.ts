/**
 * The agent side of ABP, written once for every transport. Each call is a job of the shared tree:
 * an AbortSignal, a timeout, a cancelled parent job (an ACP turn, say) or a shutdown cancels it,
 * which sends `capabilities/cancel` and waits for the app's answer, at most `graceMs`.
 */
import { GraceTimers, Job, JobTable, type AnyJob, type CancelReason } from "../core/index.js";
import {
  type AgentInfo,
  type CallRequest,
  type CallResult,
  type CancelResult,
  type InitializeResult,
  PROTOCOL_VERSION,
  type ProgressPayload,
} from "./app/protocol.js";
import { randomCallId } from "./call-id.js";
import { AbpClosedError, AbpProtocolError } from "./errors.js";
import type { AbpTransport } from "./transport.js";

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

export interface AbpCall {
  callId: string;
  capability: string;
  /** Set when the call is cancelled from this side. */
  cause: CancelCause | undefined;
  /** True once `capabilities/cancel` was sent for it. */
  cancelSent: boolean;
  /** @internal What the client does once the job is cancelled. */
  react?: () => void;
}

export interface AbpClientOptions {
  agent?: AgentInfo;
  /** How long a cancelled call waits for the app's answer before it is settled here. Default 2000 ms. */
  graceMs?: number;
  /** Told of problems that belong to no call (a cancel that could not be sent…). */
  onError?: (error: Error) => void;
}

const CAUSE_REASON: Record<CancelCause, CancelReason> = {
  abort: "external",
  cancel: "external",
  timeout: "deadline",
  parent: "internal",
  shutdown: "shutdown",
};

export class AbpClient {
  /** Calls in flight, keyed by callId. Empty at quiescence. */
  readonly calls = new JobTable<string, AbpCall>({ rememberSettled: 0 });
  private readonly expireGrace = new Map<string, () => void>();
  private readonly grace: GraceTimers<string>;
  private closedWith: AbpClosedError | undefined = undefined;
  private shuttingDown = false;

  constructor(
    readonly transport: AbpTransport,
    private readonly options: AbpClientOptions = {},
  ) {
    this.grace = new GraceTimers(options.graceMs ?? 2000, (callId) => this.expireGrace.get(callId)?.());
    void transport.closed.then((error) => {
      this.closedWith = error;
    });
  }

  initialize(params: { requestedCapabilities?: string[]; features?: Record<string, unknown> } = {}): Promise<InitializeResult> {
    return this.transport.initialize({
      agent: this.options.agent ?? { name: "acp-cancel", version: "0.1.0" },
      protocolVersion: PROTOCOL_VERSION,
      ...params,
    });
  }

  call(capability: string, params?: Record<string, unknown>, options: AbpCallOptions = {}): Promise<AbpCallResult> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const callId = options.callId ?? randomCallId();
    const job = this.calls.create(callId, { callId, capability, cause: undefined, cancelSent: false }, options.parent);
    if (job === undefined) {
      return Promise.reject(new AbpProtocolError("DUPLICATE_CALL_ID", `a call with callId "${callId}" is already in flight`));
    }
    // Cancelled before it was sent: it is skipped, as the spec has the app skip a call not yet started.
    const early: CancelCause | undefined = options.signal?.aborted ? "abort" : options.parent?.isDoomed ? "parent" : undefined;
    if (early !== undefined) {
      job.payload.cause = early;
      this.calls.settle(callId);
      return Promise.resolve({ success: false, cancelled: true, callId, cancelledBy: early });
    }
    return new Promise((resolve, reject) => {
      const { signal } = options;
      const onAbort = signal === undefined ? undefined : () => this.cancelJob(job, "abort");
      let reacted = false;
      /** Frees the call's bookkeeping; false when it was already settled (a late answer). */
      const finish = (): boolean => {
        if (job.isSettled) return false;
        if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
        if (reacted) {
          // Only a cancelled call has a grace period to stop.
          this.grace.stop(callId);
          this.expireGrace.delete(callId);
        }
        this.calls.settle(callId);
        return true;
      };
      if (onAbort !== undefined) signal?.addEventListener("abort", onAbort, { once: true });
      if (options.timeout !== undefined) job.setDeadline(options.timeout, () => this.cancelJob(job, "timeout"));
      // Once the job is cancelled, whoever did it: send the cancel, and wait at most the grace period.
      job.payload.react = () => {
        if (reacted || job.isSettled) return;
        reacted = true;
        job.payload.cause ??= "parent";
        this.expireGrace.set(callId, () => {
          const settled: AbpCallResult = { success: false, cancelled: true, callId, cancelledBy: job.payload.cause ?? "parent" };
          if (!this.shuttingDown) settled.unconfirmed = true;
          if (finish()) resolve(settled);
        });
        this.grace.start(callId);
        if (!job.payload.cancelSent && !this.shuttingDown) void this.sendCancel(job, options.onCancelAcknowledged);
      };
      // Only a parent's cascade reaches the job from outside this class; the signal (an
      // AbortController) is made only then.
      if (options.parent !== undefined) job.signal.addEventListener("abort", job.payload.react, { once: true });
      const request: CallRequest = { capability, callId };
      if (params !== undefined) request.params = params;
      if (options.progressToken !== undefined) request.options = { progressToken: options.progressToken };
      this.transport.call(request, options.onProgress).then(
        (result) => {
          if (finish()) resolve(this.withCause(result, job));
        },
        (error: unknown) => {
          if (finish()) reject(error);
        },
      );
    });
  }

  /** Cancels a call by id (one of ours or not) and returns the app's acknowledgement. */
  async cancel(callId: string, reason?: string): Promise<CancelResult> {
    const job = this.calls.get(callId);
    if (job !== undefined && job.isRunning) {
      job.payload.cancelSent = true;
      job.payload.cause = "cancel";
      job.cancel(CAUSE_REASON.cancel);
      job.payload.react?.();
    }
    return this.transport.cancel(reason === undefined ? { callId } : { callId, reason });
  }

  /**
   * Ends the session: every pending call is settled at once as cancelled by "shutdown" (the app
   * cancels its side of each when it gets `shutdown`), and their late answers are dropped.
   */
  async shutdown(reason?: string): Promise<void> {
    this.shuttingDown = true;
    try {
      for (const job of [...this.calls.values()]) {
        job.payload.cause ??= "shutdown";
        job.cancel("shutdown");
        job.payload.react?.();
        this.expireGrace.get(job.payload.callId)?.();
      }
      if (this.closedWith === undefined) await this.transport.shutdown(reason === undefined ? {} : { reason });
    } finally {
      this.shuttingDown = false;
    }
  }

  /** Shuts down (if still open) and closes the transport; pending calls settle first. */
  async close(): Promise<void> {
    if (this.closedWith === undefined) await this.shutdown("client closed").catch(() => {});
    await this.transport.close();
  }

  private cancelJob(job: Job<AbpCall>, cause: CancelCause): void {
    if (!job.isRunning) return;
    job.payload.cause = cause;
    job.cancel(CAUSE_REASON[cause]);
    job.payload.react?.();
  }

  private async sendCancel(job: Job<AbpCall>, onAck: AbpCallOptions["onCancelAcknowledged"]): Promise<void> {
    job.payload.cancelSent = true;
    const cause = job.payload.cause ?? "parent";
    try {
      // No reason is sent: an abort, a timeout and a parent's cancel look the same to the app.
      const ack = await this.transport.cancel({ callId: job.payload.callId });
      onAck?.(ack, cause);
    } catch (error) {
      // The call itself settles through its own answer, the channel closing, or the grace period.
      if (!(error instanceof AbpClosedError)) this.options.onError?.(error as Error);
    }
  }

  private withCause(result: CallResult, job: Job<AbpCall>): AbpCallResult {
    const { cause, callId } = job.payload;
    return result.cancelled === true && cause !== undefined ? { ...result, callId, cancelledBy: cause } : { ...result, callId };
  }
}
