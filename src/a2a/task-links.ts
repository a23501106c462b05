import type { Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { type Call, type CallProtocol, Calls, reasonOf } from "../core/call.js";
import { type AnyJob, type CancelReason, type Job, traceCarrier } from "../core/index.js";
import { cancelReasoning } from "./client-hook.js";
import { CancelDeniedError } from "./guard-decision.js";
import { TASK_GRACE_MS, TASK_STATE } from "./task-states.js";

/** The payload of the job that stands for one remote A2A task. */
export interface A2aTaskPayload {
  kind: "a2a-task";
  taskId: string;
}

/** How the cancel of one linked task ended; reported once per task. */
export interface TaskCancelOutcome {
  taskId: string;
  /**
   * `canceled`: the remote task is canceled. `denied`: the guard denied the cancel (nothing was
   * sent). `failed`: the cancel was sent and refused or lost (e.g. the task had already finished).
   * `no-answer`: the grace passed without an answer to the cancel.
   */
  outcome: "canceled" | "denied" | "failed" | "no-answer";
  task?: Task;
  error?: unknown;
}

export interface TaskLinksOptions {
  /** A client with the guard interceptor installed: every cancel it sends is guarded. */
  client: Pick<Client, "cancelTask">;
  /** Cancelling this job (e.g. an ACP prompt turn) cancels every linked task still running. */
  parent?: AnyJob;
  /** Aborting this signal cancels every linked task still running. */
  signal?: AbortSignal;
  /** The AOS reasoning sent with these cancels. */
  reasoning?: string;
  /** The tenant the tasks live in (default ""). */
  tenant?: string;
  /** How long to wait for a cancel's answer before settling the task's job anyway (default 5000 ms). */
  graceMs?: number;
  onOutcome?: (outcome: TaskCancelOutcome) => void;
}

type TaskCall = Call<A2aTaskPayload, void>;

/**
 * Links remote A2A tasks to the work that started them: cancelling the parent or aborting the signal sends a
 * guarded cancel for every task still running, its grace bounding the wait. `finished(taskId)`: it ended alone.
 */
export class A2aTaskLinks {
  private readonly calls: Calls<A2aTaskPayload, void, string>;
  private readonly closed = new AbortController();
  private readonly protocol: CallProtocol<A2aTaskPayload, void> = {
    sendCancel: (call) => this.sendCancel(call),
    graceEnded: (call) => this.report(call, { taskId: call.payload.taskId, outcome: "no-answer" }),
    describe: (call) => ({ protocol: "a2a", method: "task", id: call.payload.taskId, kind: "client" }),
  };

  constructor(private readonly options: TaskLinksOptions) {
    this.calls = new Calls({ graceMs: options.graceMs ?? TASK_GRACE_MS });
    const { signal } = options;
    signal?.addEventListener("abort", () => this.cancelAll(reasonOf(signal.reason)), { once: true, signal: this.closed.signal });
  }

  /** Links one task; its cancel goes out at once if the parent or signal already is. */
  add(taskId: string): Job<A2aTaskPayload> {
    const existing = this.calls.get(taskId);
    if (existing !== undefined) return existing.job;
    const { parent, signal } = this.options;
    const call = this.calls.start({ kind: "a2a-task", taskId }, { parent }, this.protocol, taskId) as TaskCall;
    if (signal?.aborted === true) call.cancel(reasonOf(signal.reason));
    return call.job;
  }

  /** The task reached a final state on its own: its job settles and no cancel will be sent. */
  finished(taskId: string): void {
    const call = this.calls.get(taskId);
    if (call !== undefined && call.job.isRunning) call.resolve();
  }

  cancelAll(reason: CancelReason = "internal"): void {
    this.calls.cancelAll(reason);
  }

  /** Resolves once every linked task's job has settled (then no job of a linked task is left). */
  async idle(): Promise<void> {
    // Tasks linked while waiting are waited for too.
    while (this.calls.size > 0) await Promise.allSettled([...this.calls.values()].map((call) => call.promise));
  }

  /** Stops listening to the signal. Tasks already linked keep their jobs. */
  close(): void {
    this.closed.abort();
  }

  private sendCancel(call: TaskCall): void {
    const { taskId } = call.payload;
    const { reasoning, tenant = "" } = this.options;
    // While tracing, the cancel carries the task's W3C trace context as HTTP headers.
    const trace = traceCarrier(call.job);
    const traced = trace !== undefined ? { serviceParameters: trace } : undefined;
    const options = reasoning !== undefined ? { ...traced, context: cancelReasoning(reasoning) } : traced;
    this.options.client
      .cancelTask({ tenant, id: taskId, metadata: {} }, options)
      .then(
        (task) => {
          const canceled = Number(task.status?.state) === TASK_STATE.canceled;
          this.report(call, { taskId, outcome: canceled ? "canceled" : "failed", task });
        },
        (error: unknown) => {
          const denied = error instanceof CancelDeniedError;
          this.report(call, { taskId, outcome: denied ? "denied" : "failed", error });
        },
      );
  }

  /** Settles the task's call and reports how its cancel ended, once: a later answer is dropped. */
  private report(call: TaskCall, outcome: TaskCancelOutcome): void {
    if (call.resolve()) this.options.onOutcome?.(outcome);
  }
}
