import type { CallLinks } from "../core/call.js";
import type { CancelReason, Job } from "../core/index.js";
import { type KeyCancelEffect, ServerCalls } from "../core/server-calls.js";
import { assertRapId, callKey } from "./messages.js";
import { rapCallInfo } from "./tracing.js";

/** The payload of a tool server's own call job. */
export interface ServerCallPayload {
  readonly protocol: "rap-server";
  readonly threadId: string;
  readonly toolCallId: string;
  readonly owner: Principal;
}

/** Who sent a notice or an invocation, as `authenticate` names it; a plain `true` is {@link ANONYMOUS}. */
export type Principal = string;
export const ANONYMOUS: Principal = "";

/** A call the server is working on: `owner`, `signal`, `job` (a `parent` for its work), `done()` (idempotent). */
export interface TrackedCall {
  readonly owner: Principal;
  readonly signal: AbortSignal;
  readonly job: Job<ServerCallPayload>;
  done(): void;
}

/** A call's handle: made once per call (`track` of the same ids returns it), its signal made on first use. */
class Tracked implements TrackedCall {
  constructor(readonly job: Job<ServerCallPayload>, private readonly calls: ServerCalls<string, ServerCallPayload>) {}
  get owner(): Principal {
    return this.job.payload.owner;
  }
  get signal(): AbortSignal {
    return this.job.signal;
  }
  done(): void {
    this.calls.done(this.job);
  }
}

/** What a notice did, for the server's logs: each is answered 200 (RAP: no call state in the response). */
export type NoticeEffect = Exclude<KeyCancelEffect, "unknown">;

export interface CallRegistryOptions {
  /** How long finished calls and early cancels are remembered. Default {@link DEFAULT_REMEMBER_MS}. */
  readonly rememberMs?: number;
  /** At most this many of each per principal, oldest forgotten first. Default {@link DEFAULT_REMEMBER_MAX}. */
  readonly rememberMax?: number;
  /** At most this many principals' memories, least recently used forgotten first. Default {@link DEFAULT_REMEMBER_PRINCIPALS}. */
  readonly rememberPrincipals?: number;
}

const CALLS = {
  keyOf: (call: ServerCallPayload) => callKey(call.threadId, call.toolCallId),
  ownerOf: (call: ServerCallPayload) => call.owner,
};

/** Why these: docs/decisions.md, "Why the RAP defaults are what they are". */
export const DEFAULT_REMEMBER_MS = 60_000;
export const DEFAULT_REMEMBER_MAX = 10_000;
export const DEFAULT_REMEMBER_PRINCIPALS = 1_000;

/** `track` of ids in flight for another principal: the second invocation must be refused. */
export class CallOwnedError extends Error {
  override readonly name = "CallOwnedError";
  constructor(readonly threadId: string, readonly toolCallId: string) {
    super(`tool call ${JSON.stringify(toolCallId)} of thread ${JSON.stringify(threadId)} is in flight for another principal`);
  }
}

/** `parent`: work this call runs under (of any binding). */
export interface TrackOptions extends Pick<CallLinks, "parent"> {
  /** The principal that sent the invocation (what `authenticate` returned for it). Default {@link ANONYMOUS}. */
  readonly owner?: Principal;
  /** The invocation's HTTP headers: their W3C trace context joins the call to the runtime's trace. */
  readonly traceHeaders?: Readonly<Record<string, unknown>>;
}

/**
 * A tool server's calls in flight by (thread_id, tool_call_id), as jobs of the tree, each owned by the
 * principal that invoked it, whose notices alone cancel (or pre-cancel) it. Its memories are bounded.
 */
export class CallRegistry {
  private readonly calls: ServerCalls<string, ServerCallPayload>;
  private readonly handles = new WeakMap<Job<ServerCallPayload>, TrackedCall>();

  constructor(options: CallRegistryOptions = {}) {
    this.calls = new ServerCalls(CALLS, {
      rememberMax: options.rememberMax ?? DEFAULT_REMEMBER_MAX,
      rememberMs: options.rememberMs ?? DEFAULT_REMEMBER_MS,
      rememberOwners: options.rememberPrincipals ?? DEFAULT_REMEMBER_PRINCIPALS,
      earlyCancels: true,
    });
  }

  get size(): number {
    return this.calls.size;
  }

  /** Finished calls and early cancels still remembered. */
  get remembered(): number {
    return this.calls.remembered;
  }

  /**
   * Starts tracking a call (or returns its owner's call of the same ids), aborted already when its cancel
   * came first. Throws {@link CallOwnedError} when the ids are in flight for another principal.
   */
  track(threadId: string, toolCallId: string, options: TrackOptions = {}): TrackedCall {
    assertRapId("thread_id", threadId);
    assertRapId("tool_call_id", toolCallId);
    const key = callKey(threadId, toolCallId);
    const owner = options.owner ?? ANONYMOUS;
    const describe = () => rapCallInfo(threadId, toolCallId, "server", options.traceHeaders);
    const payload: ServerCallPayload = { protocol: "rap-server", threadId, toolCallId, owner };
    const job = this.calls.get(key) ?? (this.calls.start(payload, options.parent, describe) as Job<ServerCallPayload>);
    if (job.payload.owner !== owner) throw new CallOwnedError(threadId, toolCallId);
    let call = this.handles.get(job);
    if (call === undefined) this.handles.set(job, (call = new Tracked(job, this.calls)));
    return call;
  }

  /** Aborts every call in flight (at shutdown: reason `shutdown`); returns how many it cancelled. */
  cancelAll(reason: CancelReason = "shutdown"): number {
    return this.calls.cancelAll(reason);
  }

  /** Applies a cancel notice from `principal` (ids already validated). */
  cancel(threadId: string, toolCallId: string, reason: CancelReason = "external", principal: Principal = ANONYMOUS): NoticeEffect {
    return this.calls.cancel(callKey(threadId, toolCallId), reason, principal) as NoticeEffect;
  }
}
