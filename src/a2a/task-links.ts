import type { Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { type AnyJob, type CancelReason, Job, JobCancelledError } from "../core/index.js";
import { cancelReasoning } from "./client-hook.js";
import { CancelDeniedError } from "./guard-errors.js";

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

/** A2A v1.0 TaskState.TASK_STATE_CANCELED (the SDK's enum is a value we do not load). */
const TASK_STATE_CANCELED = 5;

/**
 * Links remote A2A tasks to the work that started them. Each task is a job (a child of
 * `parent` when given); cancelling the parent or aborting the signal sends a guarded cancel for
 * every task still running. Tell it when a task finishes on its own with `finished(taskId)`.
 */
export class A2aTaskLinks {
  private readonly jobs = new Map<string, Job<A2aTaskPayload>>();
  private readonly graceMs: number;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly detachSignal: (() => void) | undefined;

  constructor(private readonly options: TaskLinksOptions) {
    this.graceMs = options.graceMs ?? 5000;
    const { signal } = options;
    if (signal !== undefined) {
      const onAbort = () => this.cancelAll(reasonOf(signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      this.detachSignal = () => signal.removeEventListener("abort", onAbort);
    }
  }

  /** Tasks whose jobs have not settled yet. */
  get size(): number {
    return this.jobs.size;
  }

  /** Links one task. If the parent or signal is already cancelled, its cancel goes out at once. */
  add(taskId: string): Job<A2aTaskPayload> {
    const existing = this.jobs.get(taskId);
    if (existing !== undefined) return existing;
    const job = new Job<A2aTaskPayload>({ kind: "a2a-task", taskId }, this.options.parent);
    this.jobs.set(taskId, job);
    job.signal.addEventListener("abort", () => this.sendCancel(job), { once: true });
    if (this.options.signal?.aborted) job.cancel(reasonOf(this.options.signal.reason));
    else if (this.options.parent?.isDoomed) job.cancel(this.options.parent.reason ?? "internal");
    return job;
  }

  /** The task reached a final state on its own: its job settles and no cancel will be sent. */
  finished(taskId: string): void {
    const job = this.jobs.get(taskId);
    if (job !== undefined && job.isRunning) this.settle(job);
  }

  /** Cancels every linked task still running. */
  cancelAll(reason: CancelReason = "internal"): void {
    for (const job of [...this.jobs.values()]) job.cancel(reason);
  }

  /** Resolves once every linked task's job has settled. */
  idle(): Promise<void> {
    if (this.jobs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops listening to the signal. Tasks already linked keep their jobs. */
  close(): void {
    this.detachSignal?.();
  }

  private sendCancel(job: Job<A2aTaskPayload>): void {
    const { taskId } = job.payload;
    let reported = false;
    const report = (outcome: TaskCancelOutcome) => {
      if (reported) return;
      reported = true;
      clearTimeout(grace);
      this.settle(job);
      this.options.onOutcome?.(outcome);
    };
    const grace = setTimeout(() => report({ taskId, outcome: "no-answer" }), this.graceMs);
    grace.unref?.();
    const { reasoning } = this.options;
    this.options.client
      .cancelTask(
        { tenant: this.options.tenant ?? "", id: taskId, metadata: {} },
        reasoning !== undefined ? { context: cancelReasoning(reasoning) } : undefined,
      )
      .then(
        (task) =>
          report({
            taskId,
            outcome: Number(task.status?.state) === TASK_STATE_CANCELED ? "canceled" : "failed",
            task,
          }),
        (error: unknown) =>
          report({ taskId, outcome: error instanceof CancelDeniedError ? "denied" : "failed", error }),
      );
  }

  private settle(job: Job<A2aTaskPayload>): void {
    job.settle();
    this.jobs.delete(job.payload.taskId);
    if (this.jobs.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

function reasonOf(reason: unknown): CancelReason {
  return reason instanceof JobCancelledError ? reason.reason : "external";
}
