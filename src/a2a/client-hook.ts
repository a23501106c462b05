import type { AgentCard } from "@a2a-js/sdk";
import type { CallInterceptor, ClientCallContext } from "@a2a-js/sdk/client";
import type { AosAgent } from "./aos.js";
import { a2aVersion, aosAgent, type CancelInput, cancelInputProblem, cancelMessage, toAosAgent } from "./cancel-payload.js";
import { CancelDeniedError, GuardInputError } from "./guard-decision.js";
import type { GuardianClient } from "./guardian-client.js";

/** The key under which a call's `options.context` carries the reasoning for one cancel. */
export const AOS_REASONING: unique symbol = Symbol.for("acp-cancel/a2a/aos-reasoning");

/**
 * A call context that gives one `cancelTask` call its AOS `reasoning`:
 * `client.cancelTask({ tenant: "", id, metadata: {} }, { context: cancelReasoning("too slow") })`.
 */
export function cancelReasoning(reasoning: string, context?: ClientCallContext): ClientCallContext {
  return { ...context, [AOS_REASONING]: reasoning };
}

export interface CancelGuardOptions {
  guardian: GuardianClient;
  /** The observed agent's own card: the client hook sends it in full as `context.from`. */
  self: AosAgent | AgentCard;
  /** Reasoning for a cancel whose call gives none. */
  reasoning?: string;
}

/**
 * The AOS client hook as an `@a2a-js/sdk` CallInterceptor: the guardian is asked before `cancelTask` leaves;
 * on deny nothing is sent and the call rejects with CancelDeniedError. Other calls pass untouched.
 */
export function cancelGuardInterceptor(options: CancelGuardOptions): CallInterceptor {
  const self = toAosAgent(options.self);
  let nextId = 0;
  return {
    async before(args) {
      if (args.input?.method !== "cancelTask") return;
      const input = args.input.value as unknown;
      const problem = cancelInputProblem(input);
      if (problem !== undefined) throw new GuardInputError(problem);
      const headers = Object.entries(args.options?.serviceParameters ?? {});
      const version = a2aVersion(headers.find(([key]) => key.toLowerCase() === "a2a-version")?.[1]);
      const given = args.options?.context?.[AOS_REASONING];
      const reasoning = typeof given === "string" ? given : options.reasoning;
      const decision = await options.guardian.check({
        hook: "client",
        payload: cancelMessage(version, input as CancelInput, ++nextId),
        reasoning,
        from: self,
        to: aosAgent(args.agentCard, false),
      });
      if (decision.decision === "deny") throw new CancelDeniedError(decision);
    },
    async after() {},
  };
}
