import { type Call, type CallLinks, type CallProtocol, Calls } from "../core/call.js";
import { errorMessage } from "../core/error-message.js";
import { type AnyJob, type CancelEffect, type CancelReason, type Job, traceCarrier } from "../core/index.js";
import { CancelFanout, type CancelFanoutOptions, type CancelNoticeOutcome } from "./cancel-fanout.js";
import { postWithFetch } from "./http-post.js";
import { rapCallInfo } from "./tracing.js";
import { assertRapId, callKey, firstProblem, type Invocation, syntheticResult, type ToolResult, toolResultSchema } from "./messages.js";

/** The payload of a RAP tool call's job, so a visitor of a mixed subtree can tell it apart. */
export interface RapToolCallPayload {
  readonly protocol: "rap";
  readonly threadId: string;
  readonly toolCallId: string;
  readonly callId: string;
}

/** What a dispatched call ended with: the tool's result, or the synthetic "interrupted" one. */
export interface ToolCallOutcome {
  readonly result: ToolResult;
  readonly interrupted: boolean;
  /** Why, when interrupted. */
  readonly reason?: CancelReason;
}

export interface ToolCall {
  readonly threadId: string;
  readonly toolCallId: string;
  /** The call's job: pass it as `parent` to work started for this call. */
  readonly job: Job<RapToolCallPayload>;
  /** Aborts when the call is cancelled, from wherever. */
  readonly signal: AbortSignal;
  /** Settles exactly once: with the tool's result, or at once with "interrupted" on cancel. */
  readonly outcome: Promise<ToolCallOutcome>;
}

/** `parent`: a job of any binding (an ACP prompt turn); `signal`, for plain code: either cancels the call. */
export interface DispatchOptions extends Pick<CallLinks, "parent" | "signal"> {
  readonly threadId: string;
  readonly toolCallId: string;
  /** The invocation's `call_id`; the tool call id when absent. */
  readonly callId?: string;
}

export interface InvokeOptions extends DispatchOptions {
  readonly operation: string;
  readonly arguments: Record<string, unknown>;
  /** Where the tool POSTs its tool_result; hand what arrives there to {@link RapRuntime.deliver}. */
  readonly callbackUrl: string;
  readonly userId?: string;
  readonly threadAncestors?: readonly string[];
}

/** Runtime events besides the notices' outcomes, for logs and metrics. */
export type RapRuntimeEvent =
  | CancelNoticeOutcome
  | { readonly type: "call-interrupted"; readonly threadId: string; readonly toolCallId: string; readonly reason: CancelReason }
  | { readonly type: "late-result"; readonly threadId: string; readonly toolCallId: string; readonly ignored: true }
  | { readonly type: "unknown-result"; readonly threadId: string; readonly toolCallId: string };

export interface RapRuntimeOptions extends Omit<CancelFanoutOptions, "onOutcome"> {
  readonly onEvent?: (event: RapRuntimeEvent) => void;
  /** How many finished calls to remember, to tell a late result from an unknown one. Default 4096. */
  readonly rememberFinished?: number;
}

/** What {@link RapRuntime.deliver} did with a tool_result. */
export type DeliveryEffect = "accepted" | "late-ignored" | "unknown";

type RapCall = Call<RapToolCallPayload, ToolCallOutcome>;

/**
 * The runtime side of RAP cancellation, on the core call lifecycle, a call per (thread_id, tool_call_id).
 * However a call is cancelled, RAP's cancel is the synthetic "interrupted" result at once (no grace:
 * RAP answers for the tool) and a cancel notice queued for every tool server.
 */
export class RapRuntime {
  readonly fanout: CancelFanout;
  private readonly calls: Calls<RapToolCallPayload, ToolCallOutcome, string>;
  private readonly protocol: CallProtocol<RapToolCallPayload, ToolCallOutcome> = {
    sendCancel: (call) => this.interrupt(call),
    describe: ({ payload }) => rapCallInfo(payload.threadId, payload.toolCallId, "client"),
  };

  constructor(private readonly options: RapRuntimeOptions) {
    this.fanout = new CancelFanout({ ...options, onOutcome: (outcome) => options.onEvent?.(outcome) });
    this.calls = new Calls({ rememberSettled: options.rememberFinished ?? 4096 });
  }

  get size(): number {
    return this.calls.size;
  }

  /** Registers a dispatched call. Throws if the same (thread, call) is already in flight. */
  dispatch(options: DispatchOptions): ToolCall {
    const { threadId, toolCallId } = options;
    assertRapId("threadId", threadId);
    assertRapId("toolCallId", toolCallId);
    const payload: RapToolCallPayload = { protocol: "rap", threadId, toolCallId, callId: options.callId ?? toolCallId };
    const links = { parent: options.parent, signal: options.signal };
    const call = this.calls.start(payload, links, this.protocol, callKey(threadId, toolCallId));
    if (call === undefined) throw new Error(`tool call ${JSON.stringify(toolCallId)} is already in flight in thread ${JSON.stringify(threadId)}`);
    return { threadId, toolCallId, job: call.job, signal: call.job.signal, outcome: call.promise };
  }

  /** Dispatches a call and POSTs its invocation, signed; if that fails, its outcome is an "Error: ..." result (RAP's way). */
  invoke(endpoint: string | URL, options: InvokeOptions): ToolCall {
    const { threadId, toolCallId, job } = this.dispatch(options);
    const call = this.calls.get(callKey(threadId, toolCallId)) as RapCall;
    const { callId } = job.payload;
    const invocation: Invocation = {
      operation: options.operation,
      arguments: options.arguments,
      id: toolCallId,
      call_id: callId,
      callback_url: options.callbackUrl,
      group_id: threadId,
      thread_ancestors: [...(options.threadAncestors ?? [])],
      user_id: options.userId ?? "",
    };
    this.postInvocation(endpoint, invocation, job).catch((error: unknown) => {
      if (!job.signal.aborted) call.resolve({ result: syntheticResult(job.payload, `Error: ${errorMessage(error)}`), interrupted: false });
    });
    return { threadId, toolCallId, job, signal: job.signal, outcome: call.promise };
  }

  /**
   * Hands over a `tool_result` from the callback URL; one for an interrupted call is accepted and ignored
   * (RAP: the runtime must be ready for it). Throws a TypeError naming the field for a malformed result.
   */
  deliver(message: unknown): DeliveryEffect {
    const parsed = toolResultSchema.safeParse(message);
    if (!parsed.success) throw new TypeError(`invalid tool_result: ${firstProblem(parsed.error)}`);
    const result = parsed.data;
    const key = callKey(result.group_id, result.id);
    const call = this.calls.get(key);
    if (call === undefined) {
      const ids = { threadId: result.group_id, toolCallId: result.id };
      const late = this.calls.wasSettled(key);
      this.options.onEvent?.(late ? { type: "late-result", ...ids, ignored: true } : { type: "unknown-result", ...ids });
      return late ? "late-ignored" : "unknown";
    }
    call.resolve({ result, interrupted: false });
    return "accepted";
  }

  /** Returns at once: the notices go out in the background. */
  cancel(threadId: string, toolCallId: string, reason: CancelReason = "external"): CancelEffect {
    const key = callKey(threadId, toolCallId);
    const call = this.calls.get(key);
    if (call === undefined) return this.calls.wasSettled(key) ? "already-settled" : "not-found";
    return call.cancel(reason);
  }

  /** Cancels every call in flight in a thread; returns how many it cancelled. */
  cancelThread(threadId: string, reason: CancelReason = "external"): number {
    return this.calls.cancelAll(reason, (call) => call.payload.threadId === threadId);
  }

  /** Cancels every call in flight below `parent` (a job of any binding), not `parent` itself. */
  cancelUnder(parent: AnyJob, reason: CancelReason = "external"): number {
    return this.calls.cancelAll(reason, (call) => isBelow(call.job, parent));
  }

  /** Cancels every call in flight (at shutdown: reason `shutdown`); returns how many. */
  cancelAll(reason: CancelReason = "shutdown"): number {
    return this.calls.cancelAll(reason);
  }

  idle(): Promise<void> {
    return this.fanout.idle();
  }

  /** POSTs an invocation to a toolset's `endpoint`, signed; a tool answers 200 at once (else an error naming the status). */
  private async postInvocation(endpoint: string | URL, invocation: Invocation, job: Job<RapToolCallPayload>): Promise<void> {
    const url = new URL(endpoint);
    const body = JSON.stringify(invocation);
    // The trace context goes in before the signer runs, so a signature covers it.
    const headers = new Headers({ ...traceCarrier(job), "content-type": "application/json" });
    await this.options.signer?.({ url, method: "POST", headers, body });
    const status = await postWithFetch(this.options.fetch ?? fetch, url, { headers, body, signal: job.signal });
    if (status !== 200) throw new Error(`tool server answered the invocation with HTTP ${status}`);
  }

  private interrupt(call: RapCall): void {
    const { threadId, toolCallId } = call.payload;
    const reason = call.cause ?? "external";
    call.resolve({ result: syntheticResult(call.payload), interrupted: true, reason });
    this.options.onEvent?.({ type: "call-interrupted", threadId, toolCallId, reason });
    this.fanout.notify(threadId, toolCallId, traceCarrier(call.job));
  }
}

function isBelow(job: AnyJob, ancestor: AnyJob): boolean {
  for (let p = job.parent; p !== undefined; p = p.parent) if (p === ancestor) return true;
  return false;
}
