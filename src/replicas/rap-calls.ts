/**
 * RAP tool servers across replicas, at the seam of the server's call registry (no RAP file knows of
 * replicas): `track` also claims the call on the bus; `cancel` also forwards a notice that stopped no
 * call here, and `cancelAndForward` (which the endpoint prefers) returns the forwarding's outcome too.
 * Calls are claimed and notices forwarded under their principal, so ownership holds across replicas.
 */
import { asError } from "../core/error-message.js";
import type { CancelBus, CancelVerdict } from "./cancel-bus.js";

/** What `replicateCalls` needs of a call registry (acp-cancel/rap's `CallRegistry` has it). */
export interface LocalCallRegistry {
  track(threadId: string, toolCallId: string, options?: { owner?: string }): LocalCall;
  cancel(threadId: string, toolCallId: string, reason?: "external", principal?: string): string;
}

interface LocalCall {
  readonly signal: AbortSignal;
  done(): void;
}

export interface ReplicatedCallsOptions {
  /** How long the owner has to confirm a forwarded notice (default: the bus's). */
  confirmMs?: number;
  /** What a forwarded notice achieved: RAP answers every authentic notice 200, so failures show here. */
  onForwarded?: (event: ForwardedNotice) => void;
}

export interface ForwardedNotice {
  threadId: string;
  toolCallId: string;
  outcome: CancelVerdict | { kind: "error"; error: Error };
}

/** The bus key of one principal's RAP call (thread ids and tool call ids are bounded RAP ids). */
const rapCallKey = (principal: string, threadId: string, toolCallId: string) =>
  `rap-call:${JSON.stringify([principal, threadId, toolCallId])}`;

/** `registry`, with its calls claimed on `bus` and its notices forwarded through it. */
export function replicateCalls<Registry extends LocalCallRegistry>(
  registry: Registry,
  bus: CancelBus,
  options: ReplicatedCallsOptions = {},
): Registry {
  /** Calls claimed on the bus, as handed out: tracking the same ids again returns the same call. */
  const claimed = new Map<string, LocalCall>();
  const localCancel = registry.cancel.bind(registry);

  const track: LocalCallRegistry["track"] = (threadId, toolCallId, trackOptions) => {
    const owner = trackOptions?.owner ?? "";
    const key = rapCallKey(owner, threadId, toolCallId);
    const existing = claimed.get(key);
    if (existing !== undefined) return existing;
    const call = registry.track(threadId, toolCallId, trackOptions);
    if (call.signal.aborted) return call; // cancelled before it started: nothing to claim
    const claim = bus.claim(key, async () => ({ effect: localCancel(threadId, toolCallId, "external", owner) }));
    const done = call.done.bind(call);
    // The same call, with a `done` that also releases the claim.
    const replicated = Object.assign(Object.create(call) as LocalCall, {
      done: () => {
        done();
        if (claimed.get(key) === replicated) {
          claimed.delete(key);
          claim.release();
        }
      },
    });
    claimed.set(key, replicated);
    return replicated;
  };

  const cancelAndForward = (threadId: string, toolCallId: string, reason: "external" = "external", principal = "") => {
    const effect = localCancel(threadId, toolCallId, reason, principal);
    if (effect !== "remembered" && effect !== "not-owner") return { effect };
    // The call may run on another replica, or start later (the bus remembers the cancel).
    const wait = options.confirmMs !== undefined ? { waitMs: options.confirmMs } : {};
    const forwarded = bus.cancel(rapCallKey(principal, threadId, toolCallId), wait).catch(
      (error: unknown): ForwardedNotice["outcome"] => ({ kind: "error", error: asError(error) }),
    );
    void forwarded.then((outcome) => options.onForwarded?.({ threadId, toolCallId, outcome }));
    return { effect, forwarded };
  };
  const cancel = (...args: Parameters<typeof cancelAndForward>): string => cancelAndForward(...args).effect;

  return new Proxy(registry, {
    get(target, property, receiver) {
      if (property === "track") return track;
      if (property === "cancel") return cancel;
      if (property === "cancelAndForward") return cancelAndForward;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
