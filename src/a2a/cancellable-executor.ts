import type { AgentExecutionEvent, AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server";
import { Job, jobObserver } from "../core/index.js";
import { isFinalState, TASK_STATE } from "./task-states.js";

/** Executor work that stops when its signal aborts. */
export type SignalledWork = (context: RequestContext, eventBus: ExecutionEventBus, signal: AbortSignal) => Promise<void>;

export interface CancellableExecutorOptions {
  /**
   * How long a cancel waits for the work to return before the task is reported canceled
   * anyway (default 5000 ms): the SDK itself would wait for ever.
   */
  graceMs?: number;
}

/** The payload of the job that stands for one task this agent is executing. */
export interface ServedTaskPayload {
  kind: "a2a-served-task";
  taskId: string;
}

interface Running {
  job: Job<ServedTaskPayload>;
  contextId: string;
  /** The canceled status is published once, by whoever gets there first. */
  answered: boolean;
  grace?: ReturnType<typeof setTimeout>;
}

/**
 * An `AgentExecutor` whose work gets an AbortSignal per task. `cancelTask` aborts it; once the
 * work has returned (so it has really stopped), the executor publishes the final `canceled`
 * status the SDK's cancel is waiting for, unless the work published a final state itself.
 */
export class CancellableExecutor implements AgentExecutor {
  private readonly tasks = new Map<string, Running>();
  private readonly graceMs: number;

  constructor(
    private readonly work: SignalledWork,
    options: CancellableExecutorOptions = {},
  ) {
    this.graceMs = options.graceMs ?? 5000;
  }

  /** Tasks whose work has not returned yet. */
  get running(): number {
    return this.tasks.size;
  }

  execute = async (context: RequestContext, eventBus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    const running: Running = {
      job: new Job<ServedTaskPayload>({ kind: "a2a-served-task", taskId }),
      contextId,
      answered: false,
    };
    const { signal } = running.job;
    // A sender joins the task to its trace by W3C keys in the message's metadata (acp-cancel/otel's traceContext).
    jobObserver?.onStart(running.job, { protocol: "a2a", method: "task", id: taskId, kind: "server", carrier: context.userMessage?.metadata });
    this.tasks.set(taskId, running);
    try {
      await this.work(context, watchFinal(eventBus, running), signal);
    } catch (error) {
      // Work that throws because it was aborted has stopped: that is the cancel, not a failure.
      if (!signal.aborted) throw error;
    } finally {
      clearTimeout(running.grace);
      this.tasks.delete(taskId);
      if (signal.aborted) publishCanceled(eventBus, running, taskId);
      running.job.settle();
    }
  };

  cancelTask = async (taskId: string, eventBus: ExecutionEventBus): Promise<void> => {
    const running = this.tasks.get(taskId);
    if (running === undefined) {
      // Nothing of it runs here (its work returned in an interrupted state): answer at once.
      publishCanceled(eventBus, { answered: false, contextId: "" }, taskId);
      return;
    }
    // A repeated cancel waits on the same bus for the same answer.
    if (running.grace !== undefined) return;
    running.job.cancel("external");
    running.grace = setTimeout(() => {
      publishCanceled(eventBus, running, taskId);
      running.job.settle();
    }, this.graceMs);
    running.grace.unref?.();
  };
}

function publishCanceled(eventBus: ExecutionEventBus, running: Pick<Running, "answered" | "contextId">, taskId: string) {
  if (running.answered) return;
  running.answered = true;
  eventBus.publish({
    kind: "statusUpdate",
    data: {
      taskId,
      contextId: running.contextId,
      status: { state: TASK_STATE.canceled, message: undefined, timestamp: new Date().toISOString() },
      metadata: {},
    },
  });
}

/**
 * The bus the work publishes on: notes when the work publishes a final state itself, and drops
 * what the work publishes after the task was answered canceled (a late reply past the grace).
 */
function watchFinal(eventBus: ExecutionEventBus, running: Running): ExecutionEventBus {
  return new Proxy(eventBus, {
    get(target, property, receiver) {
      if (property === "publish") {
        return (event: AgentExecutionEvent) => {
          if (running.answered) return;
          const state = event.kind === "statusUpdate" || event.kind === "task" ? event.data.status?.state : undefined;
          if (isFinalState(state)) running.answered = true;
          target.publish(event);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
