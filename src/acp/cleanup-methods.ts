/**
 * Requests whose purpose is to stop or free something. Cancelling one would keep alive the
 * very work a cancel is meant to end (a Stop whose `terminal/release` is swallowed leaves
 * the command running in the editor), so the engine never cancels them on anyone's behalf:
 * they are never nested under another request, so no cascade, no "cancelled at birth" and
 * no `session/cancel` reaches them. Their own issuer may still cancel them, and a deadline
 * still applies.
 */
export const CLEANUP_METHODS: readonly string[] = [
  "terminal/kill",
  "terminal/release",
  // ACP v2 draft: client → agent, capability-gated.
  "terminal/cancel",
  "tool_call/cancel",
];

/** The built-in table plus the extension methods an app names (`cleanupMethods`). */
export function cleanupMethodSet(extra: readonly string[] = []): ReadonlySet<string> {
  for (const method of extra) {
    if (typeof method !== "string" || method === "" || method.startsWith("$/")) {
      throw new TypeError(`cleanupMethods: '${String(method)}' cannot be a cleanup method`);
    }
  }
  return new Set([...CLEANUP_METHODS, ...extra]);
}
