import { type AnyJob, type CancelEffect, type CancelReason, Job, RecentKeys } from "../core/index.js";
import { CancelFanout, type CancelFanoutOptions, type CancelNoticeOutcome } from "./cancel-fanout.js";
import { assertRapId, callKey } from "./ids.js";
import { postInvocation } from "./invocation.js";
import { interruptedResult, type ToolResult, toolResultSchema } from "./messages.js";

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

export interface DispatchOptions {
  readonly threadId: string;
  readonly toolCallId: string;
  /** The invocation's `call_id`; the tool call id when absent. */
  readonly callId?: string;
  /** A job of any binding (an ACP prompt turn): cancelling it cancels this call. */
  readonly parent?: AnyJob;
  /** For plain code: aborting it cancels this call. */
  readonly signal?: AbortSignal;
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

interface CallState {
  readonly job: Job<RapToolCallPayload>;
  readonly resolve: (outcome: ToolCallOutcome) => void;
  readonly unlink: () => void;
}

/**
 * The runtime side of RAP cancellation. Each dispatched tool call is a job keyed by
 * (thread_id, tool_call_id). However a call is cancelled (by id, by thread, by a cancel of
 * any job above it, by an aborted signal), it gets the synthetic "interrupted" result at
 * once, its job settles, and a cancel notice is queued for every tool server.
 */
export class RapRuntime {
  readonly fanout: CancelFanout;
  private readonly calls = new Map<string, CallState>();
  private readonly finished: RecentKeys<string>;

  constructor(private readonly options: RapRuntimeOptions) {
    this.fanout = new CancelFanout({ ...options, onOutcome: (outcome) => options.onEvent?.(outcome) });
    this.finished = new RecentKeys(options.rememberFinished ?? 4096);
  }

  /** Calls in flight. */
  get size(): number {
    return this.calls.size;
  }

  /** Registers a dispatched call. Throws if the same (thread, call) is already in flight. */
  dispatch(options: DispatchOptions): ToolCall {
    const { threadId, toolCallId } = options;
    assertRapId("threadId", threadId);
    assertRapId("toolCallId", toolCallId);
    const callId = options.callId ?? toolCallId;
    const key = callKey(threadId, toolCallId);
    if (this.calls.has(key)) throw new Error(`tool call ${JSON.stringify(toolCallId)} is already in flight in thread ${JSON.stringify(threadId)}`);
    const job = new Job<RapToolCallPayload>({ protocol: "rap", threadId, toolCallId, callId }, options.parent);
    let resolve!: (outcome: ToolCallOutcome) => void;
    const outcome = new Promise<ToolCallOutcome>((r) => (resolve = r));
    const signal = job.signal;
    const onUserAbort = () => job.cancel("external");
    const onCancel = () => this.interrupt(key, job);
    signal.addEventListener("abort", onCancel, { once: true });
    options.signal?.addEventListener("abort", onUserAbort, { once: true });
    const unlink = () => {
      signal.removeEventListener("abort", onCancel);
      options.signal?.removeEventListener("abort", onUserAbort);
    };
    this.calls.set(key, { job, resolve, unlink });
    this.finished.delete(key);
    if (options.signal?.aborted) job.cancel("external");
    else if (options.parent?.isDoomed) job.cancel(doomReason(options.parent));
    return { threadId, toolCallId, job, signal, outcome };
  }

  /**
   * Dispatches a call and POSTs its invocation to the toolset's `endpoint`, signed with the
   * runtime's signer. Returns at once; if the invocation fails, the call's outcome is an
   * "Error: ..." result (RAP's convention for tool errors).
   */
  invoke(endpoint: string | URL, options: InvokeOptions): ToolCall {
    const call = this.dispatch(options);
    const invocation = {
      operation: options.operation,
      arguments: options.arguments,
      id: options.toolCallId,
      call_id: call.job.payload.callId,
      callback_url: options.callbackUrl,
      group_id: options.threadId,
      thread_ancestors: [...(options.threadAncestors ?? [])],
      user_id: options.userId ?? "",
    };
    const { signer, fetch } = this.options;
    const post = { ...(signer ? { signer } : {}), ...(fetch ? { fetch } : {}), signal: call.signal };
    postInvocation(endpoint, invocation, post).catch(
      (error: unknown) => {
        const key = callKey(options.threadId, options.toolCallId);
        const state = this.calls.get(key);
        if (state === undefined || state.job !== call.job || call.signal.aborted) return;
        const text = `Error: ${error instanceof Error ? error.message : String(error)}`;
        this.finish(key, state, { result: { type: "tool_result", group_id: options.threadId, id: options.toolCallId, call_id: invocation.call_id, text }, interrupted: false });
      },
    );
    return call;
  }

  /**
   * Hands over a `tool_result` that arrived at the callback URL. A result for a call
   * already interrupted is accepted and ignored (RAP: the runtime must be ready for it);
   * the event says so. Throws a TypeError naming the field for a malformed result.
   */
  deliver(message: unknown): DeliveryEffect {
    const parsed = toolResultSchema.safeParse(message);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TypeError(`invalid tool_result: ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
    }
    const result = parsed.data;
    const key = callKey(result.group_id, result.id);
    const state = this.calls.get(key);
    if (state === undefined) {
      const late = this.finished.has(key);
      this.options.onEvent?.(
        late
          ? { type: "late-result", threadId: result.group_id, toolCallId: result.id, ignored: true }
          : { type: "unknown-result", threadId: result.group_id, toolCallId: result.id },
      );
      return late ? "late-ignored" : "unknown";
    }
    this.finish(key, state, { result, interrupted: false });
    return "accepted";
  }

  /** Cancels one call. Returns at once: the notices go out in the background. */
  cancel(threadId: string, toolCallId: string, reason: CancelReason = "external"): CancelEffect {
    const key = callKey(threadId, toolCallId);
    const state = this.calls.get(key);
    if (state === undefined) return this.finished.has(key) ? "already-settled" : "not-found";
    return state.job.cancel(reason);
  }

  /** Cancels every call in flight in a thread; returns how many it cancelled. */
  cancelThread(threadId: string, reason: CancelReason = "external"): number {
    return this.cancelWhere((job) => job.payload.threadId === threadId, reason);
  }

  /** Cancels every call in flight below `parent` (a job of any binding), not `parent` itself. */
  cancelUnder(parent: AnyJob, reason: CancelReason = "external"): number {
    return this.cancelWhere((job) => isBelow(job, parent), reason);
  }

  /** Cancels every call in flight (at shutdown: reason `shutdown`); returns how many. */
  cancelAll(reason: CancelReason = "shutdown"): number {
    return this.cancelWhere(() => true, reason);
  }

  /** Resolves when every queued cancel notice has its outcome. */
  idle(): Promise<void> {
    return this.fanout.idle();
  }

  private cancelWhere(match: (job: Job<RapToolCallPayload>) => boolean, reason: CancelReason): number {
    let count = 0;
    for (const { job } of [...this.calls.values()]) {
      if (match(job) && job.cancel(reason) === "cancelled") count++;
    }
    return count;
  }

  private interrupt(key: string, job: Job<RapToolCallPayload>): void {
    const state = this.calls.get(key);
    if (state === undefined || state.job !== job) return;
    const { threadId, toolCallId, callId } = job.payload;
    const reason = job.reason ?? "external";
    this.finish(key, state, { result: interruptedResult(threadId, toolCallId, callId), interrupted: true, reason });
    this.options.onEvent?.({ type: "call-interrupted", threadId, toolCallId, reason });
    this.fanout.notify(threadId, toolCallId);
  }

  private finish(key: string, state: CallState, outcome: ToolCallOutcome): void {
    this.calls.delete(key);
    this.finished.add(key);
    state.unlink();
    state.job.settle();
    state.resolve(outcome);
  }
}

function isBelow(job: AnyJob, ancestor: AnyJob): boolean {
  for (let p = job.parent; p !== undefined; p = p.parent) if (p === ancestor) return true;
  return false;
}

function doomReason(job: AnyJob): CancelReason {
  for (let j: AnyJob | undefined = job; j !== undefined; j = j.parent) if (j.reason !== undefined) return j.reason;
  return "external";
}
