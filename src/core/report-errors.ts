/**
 * Reports what hooks and listeners threw while the lifecycle went on without them: rethrown in a
 * microtask, as Node does for an EventTarget listener, so `uncaughtException` sees it.
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
