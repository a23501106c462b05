/** The value, or a clear error naming what was missing (instead of a non-null assertion). */
export function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`bench: missing ${what}`);
  return value;
}
