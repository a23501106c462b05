import type { AgentCard, CancelTaskRequest, Task } from "@a2a-js/sdk";
import { A2A_ERROR_CODE, JsonRpcRequestMalformedError, JsonRpcTaskNotCancelableError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import { aosAgent } from "./agent-ref.js";
import type { AosAgent } from "./aos.js";
import { a2aVersion, cancelInputProblem, cancelMessage } from "./cancel-payload.js";
import type { GuardDecision } from "./guard-decision.js";
import type { GuardianClient } from "./guardian-client.js";
import { isFinalState } from "./task-states.js";

export interface CancelGuardHandlerOptions {
  guardian: GuardianClient;
  /** This agent's own card, sent in full as `context.to` (default: the handler's agent card). */
  self?: AosAgent | AgentCard;
  /** Who asks, as `context.from` (default: the authenticated user's name, else "anonymous"). */
  caller?: (context: ServerCallContext) => AosAgent;
}

/** The `guard` named in the data of a denied cancel's error. */
export const GUARD_NAME = "aos";

/**
 * The AOS server hook: wraps an `A2ARequestHandler` so every cancel, whatever transport the SDK
 * received it on (JSON-RPC, REST, gRPC, the v0.3 compat layer), is put to the guardian before
 * the executor hears of it. Every other method passes through untouched.
 *
 * A missing task and a task already in a final state are not put to the guardian: the inner
 * handler answers them (TaskNotFound, TaskNotCancelable, or the canceled task) unchanged.
 * On deny the task keeps running and the caller gets TaskNotCancelable (-32002) whose data
 * names the guard and carries the decision.
 */
export function guardCancelTasks(handler: A2ARequestHandler, options: CancelGuardHandlerOptions): A2ARequestHandler {
  let self: Promise<AosAgent> | undefined;
  const selfCard = () => {
    self ??= options.self !== undefined
      ? Promise.resolve(toAos(options.self))
      : handler.getAgentCard().then(
          (card) => aosAgent(card, true),
          (error: unknown) => {
            self = undefined; // ask again next time rather than keep a failure
            throw error;
          },
        );
    return self;
  };
  const caller = options.caller ?? defaultCaller;
  let nextId = 0;

  async function cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const problem = cancelInputProblem(params);
    if (problem !== undefined) {
      throw new JsonRpcRequestMalformedError({ message: problem, envelopeCode: A2A_ERROR_CODE.INVALID_PARAMS });
    }
    // TaskNotFound from here passes through as the inner handler threw it.
    const task = await handler.getTask({ tenant: params.tenant, id: params.id, historyLength: 0 }, context);
    if (isFinalState(task.status?.state)) return handler.cancelTask(params, context);
    const decision = await options.guardian.check({
      hook: "server",
      payload: cancelMessage(a2aVersion(context.requestedVersion), params, `aos-server-${++nextId}`),
      from: caller(context),
      to: await selfCard(),
    });
    if (decision.decision === "deny") throw deniedError(decision);
    return handler.cancelTask(params, context);
  }

  return withCancelTask(handler, cancelTask);
}

/** `handler` with its `cancelTask` replaced; every other member is `handler`'s own, bound to it. */
export function withCancelTask(
  handler: A2ARequestHandler,
  cancelTask: A2ARequestHandler["cancelTask"],
): A2ARequestHandler {
  return new Proxy(handler, {
    get(target, property, receiver) {
      if (property === "cancelTask") return cancelTask;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The A2A error a denied cancel gets: TaskNotCancelable, with the guard's decision as data. */
function deniedError(decision: GuardDecision): Error {
  const data = {
    guard: GUARD_NAME,
    decision: decision.decision,
    source: decision.source,
    message: decision.message,
    reasonCode: decision.reasonCode,
    requestId: decision.requestId,
    ...(decision.failure !== undefined ? { failure: decision.failure } : {}),
  };
  return new JsonRpcTaskNotCancelableError({
    message: `Task not cancelable: the AOS guard denied the cancel of ${decision.taskId} (${decision.message})`,
    // ErrorInfo metadata (the v1.0 wire) holds strings only.
    metadata: {
      guard: GUARD_NAME,
      decision: decision.decision,
      source: decision.source,
      reasonCode: decision.reasonCode.join(","),
      requestId: decision.requestId,
    },
    data,
  });
}

function defaultCaller(context: ServerCallContext): AosAgent {
  const name = context.user?.isAuthenticated ? context.user.userName : "";
  return { name: name !== "" ? name : "anonymous" };
}

function toAos(card: AosAgent | AgentCard): AosAgent {
  return Array.isArray((card as AgentCard).supportedInterfaces) ? aosAgent(card as AgentCard, true) : (card as AosAgent);
}
