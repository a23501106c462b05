/** Promises shared by the cheap readers and writers the wrapped stream hands out. */

export const RESOLVED: Promise<void> = Promise.resolve();

/** A rejected promise that does not count as unhandled (as the standard stream's). */
export function rejected(error: unknown): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => {});
  return promise;
}

/** A promise with its settle functions, whose rejection does not count as unhandled. */
export interface HandledDeferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

export function handledDeferred(): HandledDeferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}
