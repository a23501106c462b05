/** ACP method names the engine treats specially. Everything else passes through untouched. */
export const Method = {
  initialize: "initialize",
  prompt: "session/prompt",
  sessionCancel: "session/cancel",
  sessionClose: "session/close",
  requestPermission: "session/request_permission",
  sessionUpdate: "session/update",
  cancelRequest: "$/cancel_request",
} as const;

/** The two ends of an ACP connection. Requests flow both ways; ids are per issuer. */
export type Side = "client" | "agent";

export function otherSide(side: Side): Side {
  return side === "client" ? "agent" : "client";
}

/** Requests that stop or free something: never nested, so never cancelled for anyone ("Cleanup requests"). */
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
