import type { AgentCard, CancelTaskRequest, Task } from "@a2a-js/sdk";
import { A2A_ERROR_CODE, JsonRpcRequestMalformedError, JsonRpcTaskNotCancelableError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { errorMessage } from "../core/error-message.js";
import type { AosAgent } from "./aos.js";
import { a2aVersion, aosAgent, cancelInputProblem, cancelMessage, toAosAgent } from "./cancel-payload.js";
import { TASK_KEY_PREFIX, taskKey } from "./cancellable-executor.js";
import type { GuardDecision } from "./guard-decision.js";
import type { GuardianClient } from "./guardian-client.js";
import { markOrphaned, type OrphanSweeper, type SweepEvent, sweepOrphanedTasks } from "./orphaned-tasks.js";
import { overriding } from "./overriding.js";
import { isFinalState, isInterrupted, TASK_STATE } from "./task-states.js";

export interface CancelGuardHandlerOptions {
  guardian: GuardianClient;
  /** This agent's own card, sent in full as `context.to` (default: the handler's agent card). */
  self?: AosAgent | AgentCard;
  /** Who asks, as `context.from` (default: the authenticated user's name, else "anonymous"). */
  caller?: (context: ServerCallContext) => AosAgent;
}

/**
 * The AOS server hook: every cancel, on any transport, is put to the guardian before the executor hears of it
 * (a missing or final task is the inner handler's). Deny: the task runs on, the caller gets TaskNotCancelable.
 */
export function guardCancelTasks(handler: A2ARequestHandler, options: CancelGuardHandlerOptions): A2ARequestHandler {
  let self: Promise<AosAgent> | undefined;
  // A failed getAgentCard is asked again next time rather than kept.
  const selfCard = () => {
    self ??= options.self !== undefined
      ? Promise.resolve(toAosAgent(options.self))
      : handler.getAgentCard().then((card) => aosAgent(card, true), (error: unknown) => {
          self = undefined;
          throw error;
        });
    return self;
  };
  const caller = options.caller ?? defaultCaller;
  let nextId = 0;

  async function cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    checkParams(params);
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

  return overriding(handler, "cancelTask", cancelTask);
}

function checkParams(params: CancelTaskRequest): void {
  const problem = cancelInputProblem(params);
  const envelopeCode = A2A_ERROR_CODE.INVALID_PARAMS;
  if (problem !== undefined) throw new JsonRpcRequestMalformedError({ message: problem, envelopeCode });
}

function deniedError(decision: GuardDecision): Error {
  const { message, reasonCode, requestId, failure } = decision;
  const named = { guard: "aos", decision: decision.decision, source: decision.source };
  return new JsonRpcTaskNotCancelableError({
    message: `Task not cancelable: the AOS guard denied the cancel of ${decision.taskId} (${message})`,
    // ErrorInfo metadata (the v1.0 wire) holds strings only.
    metadata: { ...named, reasonCode: reasonCode.join(","), requestId },
    data: { ...named, message, reasonCode, requestId, ...(failure !== undefined ? { failure } : {}) },
  });
}

function defaultCaller(context: ServerCallContext): AosAgent {
  const name = context.user?.isAuthenticated ? context.user.userName : "";
  return { name: name !== "" ? name : "anonymous" };
}

/** Delivers a cancel to whichever replica claimed the key; `sweepOrphans` is needed only with `sweepMs`. */
export interface ReplicaCancels extends Partial<OrphanSweeper> {
  cancel(key: string, options?: { waitMs?: number; reason?: string }): Promise<ReplicaVerdict>;
}

/** What delivering a cancel achieved (see acp-cancel/replicas' `CancelVerdict`). */
export type ReplicaVerdict =
  | { kind: "confirmed"; replica: string; local: boolean; detail: unknown }
  | { kind: "unconfirmed"; owner: string }
  | { kind: "no-owner"; settled: boolean; abandonedBy?: string };

export interface CancelRoutingOptions {
  /** The executor of this replica: a task it runs is cancelled here, by the inner handler. */
  executor: { runs(taskId: string): boolean };
  replicas: ReplicaCancels;
  /** The handler's task store: a task whose replica is gone is marked failed in it. */
  taskStore: TaskStore;
  /** How long the owner has to confirm, and then the store to show the final state (default 2000 ms). */
  confirmMs?: number;
  /** Off by default: how often to mark `failed` the tasks whose replica's lease expired (docs/scale-out.md). */
  sweepMs?: number;
  /** Hears what each sweep did to a task, or the error it met. */
  onSweep?: (event: SweepEvent) => void;
}

/** The `replicas` field in the metadata of a cross-replica cancel's error: what went wrong. */
export type ReplicaFailure = "bus-unavailable" | "unconfirmed" | "owner-gone" | "owner-unknown" | "not-final";

/**
 * The replica hook: a cancel for a task on another replica goes to it over the cancel bus. `canceled` once the
 * owner confirmed and the store shows it, else TaskNotCancelable naming the failure in metadata `replicas`.
 * Put `guardCancelTasks` outside it, so the guard decides once (docs/scale-out.md).
 */
export function routeCancelsToOwner(handler: A2ARequestHandler, options: CancelRoutingOptions): A2ARequestHandler {
  const confirmMs = options.confirmMs ?? 2000;
  const { replicas, taskStore, sweepMs } = options;
  if (sweepMs !== undefined) sweepOrphanedTasks(replicas, taskStore, sweepMs, TASK_KEY_PREFIX, options.onSweep);

  async function cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    checkParams(params);
    if (options.executor.runs(params.id)) return handler.cancelTask(params, context);
    const task = await handler.getTask({ tenant: params.tenant, id: params.id, historyLength: 0 }, context);
    if (isFinalState(task.status?.state)) return handler.cancelTask(params, context);
    let verdict: ReplicaVerdict;
    try {
      verdict = await replicas.cancel(taskKey(params.id), { waitMs: confirmMs });
    } catch (error) {
      throw replicaError(params.id, "bus-unavailable", `the cancel could not reach the replica running it: ${errorMessage(error)}`);
    }
    if (verdict.kind === "confirmed") {
      return finalTask(params, context, `replica ${verdict.replica} stopped it`, `replica ${verdict.replica} confirmed the stop`);
    }
    if (verdict.kind === "unconfirmed") {
      throw replicaError(params.id, "unconfirmed", `replica ${verdict.owner} runs it but did not confirm the stop within ${confirmMs} ms; it may still be running`);
    }
    // Nothing here was read before the wait: the task may have ended, or been saved, meanwhile.
    const now = await handler.getTask({ tenant: params.tenant, id: params.id, historyLength: 0 }, context);
    if (isInterrupted(now.status?.state)) {
      // Its work returned, waiting for input: nothing runs anywhere, so the SDK's own cancel is true.
      return handler.cancelTask(params, context);
    }
    if (!verdict.settled) {
      throw replicaError(params.id, "owner-unknown", "no replica confirmed the stop and the cancel bus reconnected too recently to tell whether its replica is gone; try again");
    }
    if (verdict.abandonedBy !== undefined) {
      const outcome = await markOrphaned(taskStore, params.id, context, "cancel", verdict.abandonedBy);
      if (outcome === "marked-failed") {
        throw replicaError(params.id, "owner-gone", `the replica that ran it (${verdict.abandonedBy}) is gone (its lease expired); the task is now marked failed`);
      }
    }
    // Its replica released it: the work returned as the cancel came, and its last writes may trail.
    return finalTask(params, context, "its work had ended", "no replica runs it");
  }

  /** The work stopped or ended by itself: waits for the final state its replica writes (the write may trail). */
  async function finalTask(params: CancelTaskRequest, context: ServerCallContext, ended: string, gone: string): Promise<Task> {
    const until = Date.now() + confirmMs;
    for (;;) {
      const task = await handler.getTask({ tenant: params.tenant, id: params.id }, context);
      const state = task.status?.state;
      if (state === TASK_STATE.canceled) return task;
      if (isFinalState(state)) {
        throw replicaError(params.id, "not-final", `${ended}, but it had already ended in state ${String(state)}`);
      }
      if (Date.now() > until) {
        throw replicaError(params.id, "not-final", `${gone} but the store shows no final state within ${confirmMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  return overriding(handler, "cancelTask", cancelTask);
}

function replicaError(taskId: string, failure: ReplicaFailure, why: string): Error {
  return new JsonRpcTaskNotCancelableError({
    message: `Task not cancelable: ${taskId}: ${why}`,
    metadata: { replicas: failure },
    data: { replicas: failure },
  });
}
