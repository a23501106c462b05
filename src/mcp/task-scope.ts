import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { RequestTaskStore } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Result } from "@modelcontextprotocol/sdk/types.js";
import { type AnyJob, bindHandlerJob, type CancelReason, type JobInfo } from "../core/index.js";
import { errorMessage } from "../core/error-message.js";
import { ServerCalls } from "../core/server-calls.js";
import { watchConnection, type WatchedProtocol } from "./connection-watch.js";
import type { McpEventOptions } from "./events.js";
import type { McpHandlerHost } from "./handler-scope.js";

/** A task's work in this process. */
type McpTaskWork = { readonly taskId: string; readonly sessionId: string | undefined };

/** What `run` needs of the `createTask` handler's `extra`: the request-scoped store, the session, the trace carrier. */
export interface McpTaskExtra {
  readonly taskStore: RequestTaskStore;
  readonly sessionId?: string | undefined;
  readonly _meta?: Record<string, unknown> | undefined;
}

/** A task's work: it stops when `signal` aborts (a child process spawned with it ends); its answer is the task's result. */
export type McpTaskWorkFn = (signal: AbortSignal, job: AnyJob) => Promise<Result> | Result;

export interface McpTaskScope {
  /** Give this to the SDK server as `taskStore`: the given store, plus a `cancelled` status that stops the task's work. */
  readonly store: TaskStore;
  /** Runs a task's work as a root job of the tree; its result is stored unless the task was cancelled first. */
  run(taskId: string, extra: McpTaskExtra, work: McpTaskWorkFn): void;
  /** Cancels every running task (status `cancelled`, reason `shutdown`) when `host`'s connection closes. */
  closeWith(host: McpHandlerHost): void;
  /** Tasks whose work has not returned; zero at quiescence. */
  readonly inFlight: number;
}

/**
 * MCP tasks (2025-11-25) whose `tasks/cancel` really stops the work. The 1.x SDK's `tasks/cancel` handler only
 * writes `cancelled` to the task store; this scope wraps the store, so that write also aborts the work's signal
 * (before the SDK answers), and a result the work returns afterwards is dropped: the task stays `cancelled`.
 */
export function scopeMcpTasks(inner: TaskStore, options: McpEventOptions = {}): McpTaskScope {
  const { onEvent } = options;
  const running = new ServerCalls<string, McpTaskWork>({ keyOf: (work) => work.taskId });

  const stop = (taskId: string, reason: CancelReason) => {
    if (running.cancel(taskId, reason) !== "cancelled") return;
    onEvent?.({ type: "task-cancelled", method: "tools/call", taskId, reason, at: performance.now() });
  };

  const dropped = (taskId: string) => onEvent?.({ type: "task-result-dropped", method: "tools/call", taskId, at: performance.now() });

  const store: TaskStore = {
    createTask: (params, requestId, request, sessionId) => inner.createTask(params, requestId, request, sessionId),
    getTask: (taskId, sessionId) => inner.getTask(taskId, sessionId),
    getTaskResult: (taskId, sessionId) => inner.getTaskResult(taskId, sessionId),
    listTasks: (cursor, sessionId) => inner.listTasks(cursor, sessionId),
    async storeTaskResult(taskId, status, result, sessionId) {
      // A result after the cancel is dropped: a cancelled task stays cancelled (the spec's MUST).
      if (running.get(taskId)?.reason !== undefined) return dropped(taskId);
      await inner.storeTaskResult(taskId, status, result, sessionId);
    },
    async updateTaskStatus(taskId, status, statusMessage, sessionId) {
      await inner.updateTaskStatus(taskId, status, statusMessage, sessionId);
      if (status === "cancelled") stop(taskId, "external");
    },
  };
  const record = async (taskId: string, extra: McpTaskExtra, job: AnyJob, status: "completed" | "failed", result: Result) => {
    if (job.reason !== undefined) return dropped(taskId);
    try {
      await extra.taskStore.storeTaskResult(taskId, status, result);
    } catch {
      // The store refused: the task turned terminal meanwhile (a cancel that raced the work's end).
      dropped(taskId);
    }
  };

  return {
    store,
    run(taskId, extra, work) {
      // The task outlives its request: a root job, in the request's trace through the sender's `_meta`.
      const describe = (): JobInfo => ({
        protocol: "mcp", method: "tools/call", kind: "server", carrier: extra._meta,
        attributes: { "mcp.task.id": taskId },
      });
      const job = running.start({ taskId, sessionId: extra.sessionId }, undefined, describe);
      if (job === undefined) throw new Error(`acp-cancel/mcp: task ${taskId} already runs`);
      bindHandlerJob(job.signal, job);
      void Promise.resolve()
        .then(() => work(job.signal, job))
        .then(
          (result) => record(taskId, extra, job, "completed", result),
          (error: unknown) => {
            const text = errorMessage(error);
            return record(taskId, extra, job, "failed", { content: [{ type: "text", text }], isError: true });
          },
        )
        .finally(() => running.done(job));
    },
    closeWith(host) {
      const target = ("server" in host ? host.server : host) as unknown as WatchedProtocol;
      watchConnection(target, () => {
        for (const job of [...running.values()]) {
          const { taskId, sessionId } = job.payload;
          if (job.reason !== undefined) continue;
          stop(taskId, "shutdown");
          void inner.updateTaskStatus(taskId, "cancelled", "The connection closed.", sessionId).catch(() => {});
        }
      });
    },
    get inFlight() {
      return running.size;
    },
  };
}
