import type { Call } from "../core/call.js";
import { JobCancelledError } from "../core/index.js";
import type { McpEvent, McpOutcome } from "./events.js";
import { classifyCancelError, isTerminalStatus, type McpTaskStatus, readTaskStatus } from "./task-shapes.js";

/** Sends one MCP request through the SDK client (`client.request` with a result schema that takes any answer). */
export type McpRequester = (
  method: string,
  params: Record<string, unknown>,
  options: { signal?: AbortSignal; timeout?: number },
) => Promise<unknown>;

/** How often a cancelled task's status is read while it is not yet terminal (bounded by the call's grace). */
const CANCEL_POLL_MS = 25;

/** What the follower needs of the call it finishes. */
export interface TaskFollowing {
  readonly call: Call<unknown, unknown>;
  readonly taskId: string;
  readonly request: McpRequester;
  readonly label: string | undefined;
  /** The caller's timeout for the `tasks/result` wait (the SDK's default otherwise). */
  readonly resultTimeout: number | undefined;
  readonly graceMs: number;
  readonly emit: ((event: McpEvent) => void) | undefined;
  /** Sets the outcome the call's `settled` event reports. */
  readonly outcome: (outcome: McpOutcome) => void;
}

/**
 * Follows a task a server answered a request with (MCP 2025-11-25): waits on `tasks/result`; on a cancel sends
 * `tasks/cancel`, stops that wait, and settles the call once the task is terminal, or at the grace's end.
 */
export class TaskFollower {
  private readonly resultWait = new AbortController();
  private lastStatus: string = "working";

  constructor(private readonly f: TaskFollowing) {}

  /** Waits on `tasks/result`; its answer (or error) is the call's, unless the call was cancelled meanwhile. */
  start(): void {
    const { call, taskId, request, resultTimeout } = this.f;
    const { signal } = this.resultWait;
    const options = resultTimeout === undefined ? { signal } : { signal, timeout: resultTimeout };
    request("tasks/result", { taskId }, options).then(
      (value) => this.finish(() => (this.f.outcome("answered"), call.resolve(value))),
      (error: unknown) => this.finish(() => (this.f.outcome("failed"), call.reject(error))),
    );
  }

  /** The parent's cancel: `tasks/cancel`, then stop waiting for the result; the task's end settles the call. */
  cancel(): void {
    const { taskId, request, graceMs, emit, label } = this.f;
    request("tasks/cancel", { taskId }, { timeout: graceMs }).then(
      (answer) => {
        const read = readTaskStatus(answer);
        if ("problem" in read) return this.badStatus(read.problem);
        emit?.({ type: "task-cancel", method: "tasks/cancel", label, taskId, answer: read.status, at: performance.now() });
        this.observe(read.status);
      },
      (error: unknown) => {
        const answer = classifyCancelError(error);
        emit?.({ type: "task-cancel", method: "tasks/cancel", label, taskId, answer, at: performance.now() });
        // Already terminal or gone: nothing runs to wait for.
        if (answer === "failed") this.poll();
        else this.ended();
      },
    );
    this.resultWait.abort();
  }

  /** The grace passed with the task not terminal: the server runs it on after `cancelled`; say so. */
  graceEnded(): void {
    const { taskId, emit, label } = this.f;
    emit?.({ type: "task-running", method: "tools/call", label, taskId, status: this.lastStatus, at: performance.now() });
    this.f.outcome("gave-up");
  }

  private observe(status: McpTaskStatus): void {
    this.lastStatus = status;
    if (isTerminalStatus(status)) this.ended();
    else this.poll();
  }

  /** Reads the task's status until it is terminal or the call settled (the grace's end settles it). */
  private poll(): void {
    const { call, taskId, request, graceMs } = this.f;
    if (call.settled) return;
    setTimeout(() => {
      if (call.settled) return;
      request("tasks/get", { taskId }, { timeout: graceMs }).then(
        (answer) => {
          const read = readTaskStatus(answer);
          if ("problem" in read) this.badStatus(read.problem);
          else this.observe(read.status);
        },
        () => this.poll(),
      );
    }, CANCEL_POLL_MS).unref?.();
  }

  private badStatus(problem: string): void {
    const { emit, label, taskId } = this.f;
    emit?.({ type: "bad-task", method: "tasks/get", label, problem: `${problem} (task ${taskId})`, at: performance.now() });
    this.poll();
  }

  /** The task is terminal after the cancel: the call ends cancelled. */
  private ended(): void {
    const { call } = this.f;
    this.f.outcome("cancelled");
    call.reject(new JobCancelledError(call.cause ?? "internal"));
  }

  /** Settles from the `tasks/result` wait, unless the call is being cancelled (then the task's end settles it). */
  private finish(settle: () => void): void {
    if (this.f.call.job.reason === undefined) settle();
  }
}
