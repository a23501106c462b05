import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Runs `body` with the process's uncaught-exception handling replaced by a recorder, and
 * returns what was reported: the lifecycle rethrows a hook's or listener's error in a microtask.
 */
export async function withReports(body: () => Promise<void> | void): Promise<unknown[]> {
  const saved = process.listeners("uncaughtException");
  process.removeAllListeners("uncaughtException");
  const reported: unknown[] = [];
  const record = (error: unknown) => reported.push(error);
  process.on("uncaughtException", record);
  try {
    await body();
    await nextTurn();
  } finally {
    process.removeListener("uncaughtException", record);
    for (const listener of saved) process.on("uncaughtException", listener);
  }
  return reported;
}
