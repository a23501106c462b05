import type { AgentExecutionEvent, AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server";
import type { TaskState } from "@a2a-js/sdk";
import { GraceTimers, Job, jobObserver, RecentKeys, settleJob } from "../core/index.js";
import { claimRecord } from "./orphaned-tasks.js";
import { overriding } from "./overriding.js";
import { isFinalState, TASK_STATE } from "./task-states.js";

/** Executor work that stops when its signal aborts. */
export type SignalledWork = (context: RequestContext, eventBus: ExecutionEventBus, signal: AbortSignal) => Promise<void>;

export interface CancellableExecutorOptions {
  /** How long a cancel waits for the work to return before reporting canceled anyway (default 5000 ms; the SDK waits on). */
  graceMs?: number;
  /** Announces the tasks to the service's other replicas, so a cancel reaching one stops the work here. */
  replicas?: TaskOwnership;
}

/**
 * A task is claimed while its work runs; `stop` is called when a cancel for it reached another
 * replica. `record` (the task's store scope) is kept with the claim for the orphan sweep.
 */
export interface TaskOwnership {
  claim(key: string, stop: () => Promise<StoppedTask>, options?: { record?: string }): { release(): void };
}

/** The final state the owner published once the task's work stopped. */
export interface StoppedTask {
  taskId: string;
  state: TaskState | undefined;
}

export const TASK_KEY_PREFIX = "a2a-task:";
export const taskKey = (taskId: string) => `${TASK_KEY_PREFIX}${taskId}`;

/** How many returned tasks are remembered, to tell "ran here and returned" from "never ran here". */
const RETURNED_MEMORY = 10_000;

/** The payload of the job that stands for one task this agent is executing. */
export interface ServedTaskPayload {
  kind: "a2a-served-task";
  taskId: string;
}

interface Running {
  job: Job<ServedTaskPayload>;
  contextId: string;
  /** The bus `execute` publishes on: the SDK hands a cancel the task's bus, this one. */
  eventBus: ExecutionEventBus;
  /** A final state was published, by the work or by the cancel: only the first one goes out. */
  answered: boolean;
  finalState?: TaskState | undefined;
  /** Resolves once the task is answered: its work returned, or the grace ran out. */
  ended: Promise<void>;
  end(): void;
}

/**
 * An `AgentExecutor` whose work gets an AbortSignal per task. Once aborted work has returned, it
 * publishes the `canceled` status the SDK's cancel waits for (unless the work published a final state).
 */
export class CancellableExecutor implements AgentExecutor {
  private readonly tasks = new Map<string, Running>();
  private readonly returned = new RecentKeys<string>(RETURNED_MEMORY);
  private readonly grace: GraceTimers<Running>;
  private readonly replicas: TaskOwnership | undefined;

  constructor(private readonly work: SignalledWork, options: CancellableExecutorOptions = {}) {
    this.grace = new GraceTimers(options.graceMs ?? 5000, (running) => {
      publishCanceled(running.eventBus, running, running.job.payload.taskId);
      settleJob(running.job);
      running.end();
    });
    this.replicas = options.replicas;
  }

  /** Tasks whose work has not returned yet. */
  get running(): number {
    return this.tasks.size;
  }

  /** Whether the work of `taskId` runs in this process now. */
  runs(taskId: string): boolean {
    return this.tasks.has(taskId);
  }

  execute = async (context: RequestContext, eventBus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = context;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const running: Running = {
      job: new Job<ServedTaskPayload>({ kind: "a2a-served-task", taskId }),
      contextId, eventBus, answered: false, ended, end,
    };
    const { signal } = running.job;
    // A sender joins the task to its trace by W3C keys in the message's metadata (acp-cancel/otel's traceContext).
    jobObserver?.onStart(running.job, { protocol: "a2a", method: "task", id: taskId, kind: "server", carrier: context.userMessage?.metadata });
    this.tasks.set(taskId, running);
    const claim = this.replicas?.claim(taskKey(taskId), () => this.stop(running), { record: claimRecord(context) });
    try {
      await this.work(context, watchFinal(eventBus, running), signal);
    } catch (error) {
      // Work that throws because it was aborted has stopped: that is the cancel, not a failure.
      if (!signal.aborted) throw error;
    } finally {
      this.grace.stop(running);
      this.tasks.delete(taskId);
      this.returned.add(taskId);
      if (signal.aborted) publishCanceled(eventBus, running, taskId);
      settleJob(running.job);
      running.end();
      claim?.release();
    }
  };

  cancelTask = async (taskId: string, eventBus: ExecutionEventBus): Promise<void> => {
    const running = this.tasks.get(taskId);
    if (running === undefined) {
      if (!this.returned.has(taskId)) {
        // Never answer canceled for work this process cannot see: it may run on another replica.
        throw new Error(`task ${taskId} does not run in this process: CancellableExecutor cannot cancel work it cannot see`);
      }
      // Its work ran here and returned (in an interrupted state): nothing runs, answer at once.
      publishCanceled(eventBus, { answered: false, contextId: "" }, taskId);
      return;
    }
    this.abort(running);
  };

  /** A cancel from another replica: abort, then report the final state once the task is answered. */
  private async stop(running: Running): Promise<StoppedTask> {
    this.abort(running);
    await running.ended;
    return { taskId: running.job.payload.taskId, state: running.finalState };
  }

  private abort(running: Running): void {
    // A repeated cancel waits for the same answer.
    if (running.job.state !== "running") return;
    running.job.cancel("external");
    this.grace.start(running);
  }
}

function publishCanceled(
  eventBus: ExecutionEventBus,
  running: Pick<Running, "answered" | "contextId" | "finalState">,
  taskId: string,
) {
  if (running.answered) return;
  running.answered = true;
  running.finalState = TASK_STATE.canceled;
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

/** The work's bus: notes a final state the work publishes, drops what it publishes after the task was answered. */
function watchFinal(eventBus: ExecutionEventBus, running: Running): ExecutionEventBus {
  return overriding(eventBus, "publish", (event: AgentExecutionEvent) => {
    if (running.answered) return;
    const state = event.kind === "statusUpdate" || event.kind === "task" ? event.data.status?.state : undefined;
    if (isFinalState(state)) {
      running.answered = true;
      running.finalState = state;
    }
    eventBus.publish(event);
  });
}
