import type { AgentExecutionEvent, AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server";
import type { TaskState } from "@a2a-js/sdk";
import { bindHandlerJob } from "../core/index.js";
import { type ServerCallProtocol, ServerCalls } from "../core/server-calls.js";
import { claimRecord } from "./orphaned-tasks.js";
import { overriding } from "./overriding.js";
import { isFinalState, TASK_GRACE_MS, TASK_STATE } from "./task-states.js";

/** Executor work that stops when its signal aborts. */
export type SignalledWork = (context: RequestContext, eventBus: ExecutionEventBus, signal: AbortSignal) => Promise<void>;

export interface CancellableExecutorOptions {
  /** How long a cancel waits for the work to return before reporting canceled anyway (default 5000 ms; the SDK waits on). */
  graceMs?: number;
  /** Announces the tasks to the service's other replicas, so a cancel reaching one stops the work here. */
  replicas?: TaskOwnership;
}

/** Claims a task while its work runs; `stop` is called when a cancel for it reached another replica. */
export interface TaskOwnership {
  claim(key: string, stop: () => Promise<StoppedTask>, options?: { record?: string }): { release(): void };
}

export interface StoppedTask {
  taskId: string;
  state: TaskState | undefined;
}

export const TASK_KEY_PREFIX = "a2a-task:";
export const taskKey = (taskId: string) => `${TASK_KEY_PREFIX}${taskId}`;

/** How many returned tasks are remembered, to tell "ran here and returned" from "never ran here". */
const RETURNED_MEMORY = 10_000;

/** One task this agent is executing (its job's payload). */
class ServedTask {
  readonly kind = "a2a-served-task";
  /** The first final state published (the work's, or `canceled`): the task's one answer. */
  finalState: TaskState | undefined = undefined;
  /** Resolves once its work returned, or the grace ran out. */
  readonly ended: Promise<void>;
  end!: () => void;

  constructor(
    readonly taskId: string,
    readonly contextId: string,
    readonly eventBus: ExecutionEventBus,
  ) {
    this.ended = new Promise<void>((resolve) => (this.end = resolve));
  }

  canceled(): void {
    if (this.finalState === undefined) this.finalState = publishCanceled(this.eventBus, this.taskId, this.contextId);
  }
}

const SERVED_TASKS: ServerCallProtocol<string, ServedTask, never> = {
  keyOf: (task) => task.taskId,
  graceEnded: (call) => void call.payload.canceled(),
  settled: (call) => call.payload.end(),
};

/**
 * An `AgentExecutor` whose work gets an AbortSignal per task (`jobOf(signal)` is its job). A cancelled task is
 * answered `canceled` once its work returned (unless it published a final state), or when the grace ends.
 */
export class CancellableExecutor implements AgentExecutor {
  private readonly tasks: ServerCalls<string, ServedTask>;
  private readonly replicas: TaskOwnership | undefined;

  constructor(private readonly work: SignalledWork, options: CancellableExecutorOptions = {}) {
    this.tasks = new ServerCalls(SERVED_TASKS, { grace: options.graceMs ?? TASK_GRACE_MS, rememberMax: RETURNED_MEMORY });
    this.replicas = options.replicas;
  }

  /** Tasks whose work has not returned (nor run past its grace). */
  get running(): number {
    return this.tasks.size;
  }

  runs(taskId: string): boolean {
    return this.tasks.get(taskId) !== undefined;
  }

  execute = async (context: RequestContext, eventBus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    const served = new ServedTask(taskId, contextId, eventBus);
    // A sender joins the task to its trace by W3C keys in the message's metadata (acp-cancel/otel's traceContext).
    const describe = () => ({ protocol: "a2a", method: "task", id: taskId, kind: "server", carrier: context.userMessage?.metadata }) as const;
    const task = this.tasks.start(served, undefined, describe);
    if (task === undefined) throw new Error(`task ${taskId} is already executing in this process`);
    const { signal } = task;
    bindHandlerJob(signal, task);
    const claim = this.replicas?.claim(taskKey(taskId), () => this.stop(served), { record: claimRecord(context) });
    try {
      await this.work(context, watchFinal(served), signal);
    } catch (error) {
      // Work that throws because it was aborted has stopped: that is the cancel, not a failure.
      if (!signal.aborted) throw error;
    } finally {
      if (signal.aborted) served.canceled();
      this.tasks.done(task);
      claim?.release();
    }
  };

  cancelTask = async (taskId: string, eventBus: ExecutionEventBus): Promise<void> => {
    const effect = this.tasks.cancel(taskId, "external");
    // Never answer canceled for work this process cannot see: it may run on another replica.
    if (effect === "unknown") {
      throw new Error(`task ${taskId} does not run in this process: CancellableExecutor cannot cancel work it cannot see`);
    }
    // Its work ran here and returned (waiting for input): nothing runs, answer at once.
    if (effect === "already-finished") publishCanceled(eventBus, taskId, "");
  };

  /** A cancel from another replica: abort, then report the final state once the task is answered. */
  private async stop(task: ServedTask): Promise<StoppedTask> {
    this.tasks.cancel(task.taskId, "external");
    await task.ended;
    return { taskId: task.taskId, state: task.finalState };
  }
}

function publishCanceled(eventBus: ExecutionEventBus, taskId: string, contextId: string): TaskState {
  const status = { state: TASK_STATE.canceled, message: undefined, timestamp: new Date().toISOString() };
  eventBus.publish({ kind: "statusUpdate", data: { taskId, contextId, status, metadata: {} } });
  return TASK_STATE.canceled;
}

/** The work's bus: notes a final state the work publishes, drops what it publishes after the task was answered. */
function watchFinal(task: ServedTask): ExecutionEventBus {
  const { eventBus } = task;
  return overriding(eventBus, "publish", (event: AgentExecutionEvent) => {
    if (task.finalState !== undefined) return;
    const state = event.kind === "statusUpdate" || event.kind === "task" ? event.data.status?.state : undefined;
    if (isFinalState(state)) task.finalState = state;
    eventBus.publish(event);
  });
}
