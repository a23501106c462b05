/** Polls an async check until it yields a value other than undefined (a wait, not a timed assertion). */
export async function until<T>(check: () => Promise<T | undefined>, what: string, limitMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
