/** Promises shared by the cheap readers and writers the wrapped stream hands out. */

export const RESOLVED: Promise<void> = Promise.resolve();

/** A rejected promise that does not count as unhandled (as the standard stream's). */
export function rejected(error: unknown): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => {});
  return promise;
}
