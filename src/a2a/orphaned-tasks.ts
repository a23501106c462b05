// Tasks whose replica is gone: the one way a cancel or the sweep marks them `failed` (docs/scale-out.md).
import type { Task } from "@a2a-js/sdk";
import type { RequestContext, ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { z } from "zod";
import { guarded } from "../core/report-errors.js";
import { MAX_TIMER_MS } from "../core/timer-limit.js";
import { escapeControl } from "../wire/index.js";
import { isFinalState, isInterrupted, TASK_STATE } from "./task-states.js";

/** Why a task was found orphaned, in the words of its new status message. */
const FOUND_BY = {
  cancel: "a cancel found no live owner",
  sweep: "a sweep found its replica's lease on the cancel bus expired",
};
type OrphanFinder = keyof typeof FOUND_BY;

/** Marks an orphan's status message: acp-cancel/replicas' `guardTerminalTaskStates` applies it as a status change only. */
export const ORPHANED_MARK = "acpCancelOrphaned";

/** What marking one task did: `left` = final already, or waiting for input (its work returned). */
export type OrphanOutcome = "marked-failed" | "left" | "not-found";

/**
 * Marks the task failed, saying why, unless it is final or waits for input (nothing ran on the dead replica).
 * Writes a copy read now: one read before a wait would erase the artifacts and history persisted since.
 */
export async function markOrphaned(
  store: TaskStore,
  taskId: string,
  context: ServerCallContext,
  foundBy: OrphanFinder,
  replica: string,
): Promise<OrphanOutcome> {
  const task = await store.load(taskId, context);
  if (task === undefined) return "not-found";
  const state = task.status?.state;
  if (isFinalState(state) || isInterrupted(state)) return "left";
  await store.save(orphaned(task, foundBy, replica), context);
  return "marked-failed";
}

function orphaned(task: Task, foundBy: OrphanFinder, replica: string): Task {
  const text = `The replica running this task (${replica}) stopped before the task ended; ${FOUND_BY[foundBy]}.`;
  return {
    ...task,
    status: {
      state: TASK_STATE.failed,
      message: {
        role: 2, // ROLE_AGENT
        messageId: crypto.randomUUID(),
        taskId: task.id,
        contextId: task.contextId,
        parts: [{ content: { $case: "text", value: text }, mediaType: "text/plain", filename: "", metadata: {} }],
        metadata: { [ORPHANED_MARK]: foundBy },
        extensions: [],
        referenceTaskIds: [],
      },
      timestamp: new Date().toISOString(),
    },
  } as Task;
}

/** Kept with a task's claim: the store scope (tenant, user) a sweep on another replica then uses. */
export function claimRecord(context: RequestContext): string {
  const call = context.context as ServerCallContext | undefined;
  const user = call?.user;
  return JSON.stringify({
    tenant: call?.tenant ?? "",
    ...(user !== undefined ? { user: { userName: user.userName, isAuthenticated: user.isAuthenticated } } : {}),
  });
}

/** A claim record as the sweep reads it; a user of the wrong shape is left out, not refused. */
const ClaimRecordSchema = z.object({
  tenant: z.string(),
  user: z.object({ userName: z.string(), isAuthenticated: z.boolean() }).optional().catch(undefined),
});

/** The call context a sweep reads and writes an orphaned task with; rejects for a record it cannot read. */
export async function sweepContext(record: string): Promise<ServerCallContext> {
  let parsed: z.infer<typeof ClaimRecordSchema>;
  try {
    parsed = ClaimRecordSchema.parse(JSON.parse(record));
  } catch {
    // Anyone with access to the bus could have written it: any text at all, named escaped and cut short.
    throw new Error(`an unreadable claim record: ${escapeControl(record.slice(0, 200))}`);
  }
  // Loaded when a sweep runs, not with the hook: the SDK's server entry is the heavier one.
  const { ServerCallContext: Context } = await import("@a2a-js/sdk/server");
  return new Context({ tenant: parsed.tenant, ...(parsed.user !== undefined ? { user: parsed.user } : {}) });
}

/** acp-cancel/replicas' `OrphanedClaim`: a claim whose owner's lease expired. */
type OrphanedClaim = { key: string; replica: string; record: string };

/** The part of a cancel bus the sweep needs (acp-cancel/replicas' `CancelBus.sweepOrphans`). */
export interface OrphanSweeper {
  sweepOrphans(prefix: string, options: {
    everyMs: number;
    onOrphan(orphan: OrphanedClaim): Promise<void>;
    onError(error: Error, orphan?: OrphanedClaim): void;
  }): { stop(): void };
}

/** What one sweep did with a task, or an error it met (nothing changed; the next sweep tries again). */
export type SweepEvent =
  | { taskId: string; replica: string; outcome: OrphanOutcome }
  | { taskId?: string; replica?: string; error: Error };

/** Starts the bus's sweep over task claims, marking each orphan failed; stopped by the bus's `close()`. */
export function sweepOrphanedTasks(
  bus: Partial<OrphanSweeper>,
  store: TaskStore,
  everyMs: number,
  keyPrefix: string,
  report: (event: SweepEvent) => void = () => undefined,
): void {
  if (!Number.isInteger(everyMs) || everyMs < 10 || everyMs > MAX_TIMER_MS) {
    throw new RangeError(`routeCancelsToOwner: sweepMs must be an integer number of ms from 10 to ${MAX_TIMER_MS}, got ${String(everyMs)}`);
  }
  if (typeof bus.sweepOrphans !== "function") {
    throw new TypeError("routeCancelsToOwner: sweepMs needs a `replicas` bus with sweepOrphans (acp-cancel/replicas' CancelBus)");
  }
  // The sweep goes on whatever the listener does.
  const tell = (event: SweepEvent) => guarded(() => report(event), []);
  bus.sweepOrphans(keyPrefix, {
    everyMs,
    onOrphan: async ({ key, replica, record }) => {
      const taskId = key.slice(keyPrefix.length);
      const context = await sweepContext(record);
      tell({ taskId, replica, outcome: await markOrphaned(store, taskId, context, "sweep", replica) });
    },
    onError: (error, orphan) => {
      tell(orphan === undefined ? { error } : { taskId: orphan.key.slice(keyPrefix.length), replica: orphan.replica, error });
    },
  });
}
