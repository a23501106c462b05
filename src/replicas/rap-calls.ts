/**
 * RAP tool servers across replicas. The seam is the tool server's own call registry: the
 * endpoint and the server's code keep using it as before, and `replicateCalls` returns the
 * same registry with two methods extended and one added (no RAP file knows of replicas):
 * - `track` also claims the call on the bus, so a notice reaching another replica stops it here;
 * - `cancel` (what the endpoint calls for a notice) also sends the notice over the bus when it
 *   stopped no call here (none, or another principal's of the same ids); the bus remembers it
 *   for `rememberMs`, so a call that starts later on any replica starts cancelled. The endpoint
 *   calls `cancelAndForward` instead when present: the same, and the forwarding's outcome (for onNotice).
 * The structural types below are the part of `acp-cancel/rap`'s `CallRegistry` this needs.
 *
 * Ownership holds across replicas: a call is claimed under its owner's principal, and a notice
 * is forwarded under the principal that sent it, so another principal's notice finds no owner on
 * any replica (it is remembered as that principal's early cancel, as on one replica).
 */
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
  /**
   * What a notice forwarded to another replica achieved, for logs and metrics: RAP answers
   * every authentic notice 200 whatever it found, so this is where a failure shows.
   */
  onForwarded?: (event: ForwardedNotice) => void;
}

export interface ForwardedNotice {
  threadId: string;
  toolCallId: string;
  /** The bus's verdict, or the error when the bus could not deliver it. */
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
    // The same call with a `done` that also releases the claim (its other members are the call's own).
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

  /** The local effect, and what forwarding the notice achieved when it stopped no call here. */
  const cancelAndForward = (threadId: string, toolCallId: string, reason: "external" = "external", principal = "") => {
    const effect = localCancel(threadId, toolCallId, reason, principal);
    if (effect !== "remembered" && effect !== "not-owner") return { effect };
    // Not stopped here: the call may run on another replica (here, another principal may hold
    // the same ids: one replica refuses that with CallOwnedError, replicas do not), or start later.
    const wait = options.confirmMs !== undefined ? { waitMs: options.confirmMs } : {};
    const forwarded = bus.cancel(rapCallKey(principal, threadId, toolCallId), wait).catch(
      (error: unknown): ForwardedNotice["outcome"] => ({ kind: "error", error: error instanceof Error ? error : new Error(String(error)) }),
    );
    void forwarded.then((outcome) => options.onForwarded?.({ threadId, toolCallId, outcome }));
    return { effect, forwarded };
  };
  const cancel = (...args: Parameters<typeof cancelAndForward>): string => cancelAndForward(...args).effect;

  return new Proxy(registry, {
    get(target, property, receiver) {
      if (property === "track") return track;
      if (property === "cancel") return cancel;
      if (property === "cancelAndForward") return cancelAndForward; // the RAP endpoint's onNotice reports `forwarded`
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
