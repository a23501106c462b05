/**
 * Reports errors that a binding's hook or a user's listener threw while the lifecycle went on
 * without them. A throw must not stop a cancel cascade or leave a call unsettled, and must not
 * be swallowed either: like an EventTarget listener's error in Node, it is rethrown outside the
 * caller's stack (a microtask), where the process's `uncaughtException` handling sees it.
 */
export function reportErrors(errors: readonly unknown[], what: string): void {
  if (errors.length === 0) return;
  const error = errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} errors while ${what}`);
  queueMicrotask(() => {
    throw error;
  });
}

/** Runs `step`, collecting what it throws into `errors` instead of letting it escape. */
export function guarded(step: () => void, errors: unknown[]): void {
  try {
    step();
  } catch (error) {
    errors.push(error);
  }
}
