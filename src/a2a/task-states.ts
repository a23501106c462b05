import type { TaskState } from "@a2a-js/sdk";

/** A2A v1.0 task states by their wire numbers: the SDK's enum is a runtime value, loaded by the server hook only. */
export const TASK_STATE = {
  completed: 3 as TaskState,
  failed: 4 as TaskState,
  canceled: 5 as TaskState,
  rejected: 7 as TaskState,
} as const;

const FINAL: ReadonlySet<TaskState | undefined> = new Set(Object.values(TASK_STATE));
/** input-required (6) and auth-required (8): the work returned and waits for the caller. */
const INTERRUPTED: ReadonlySet<number | undefined> = new Set([6, 8]);

/** The final states: a task in one of them cannot be cancelled (A2A's TaskNotCancelable). */
export const isFinalState = (state: TaskState | undefined): boolean => FINAL.has(state);
export const isInterrupted = (state: TaskState | undefined): boolean => INTERRUPTED.has(state);

/** How long a cancelled task is waited for (its work here, a guarded cancel's round trip there) before it is answered anyway. */
export const TASK_GRACE_MS = 5000;
