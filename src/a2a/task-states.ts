import type { TaskState } from "@a2a-js/sdk";

/**
 * A2A v1.0 task states this binding needs, by their wire numbers: the SDK's enum is a runtime
 * value, and only the server hook loads the SDK at run time.
 */
export const TASK_STATE = {
  completed: 3 as TaskState,
  failed: 4 as TaskState,
  canceled: 5 as TaskState,
  rejected: 7 as TaskState,
} as const;

/** The final states: a task in one of them cannot be cancelled (A2A's TaskNotCancelable). */
export function isFinalState(state: TaskState | undefined): boolean {
  return state === TASK_STATE.completed ||
    state === TASK_STATE.failed ||
    state === TASK_STATE.canceled ||
    state === TASK_STATE.rejected;
}
