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

export { sessionIdOf } from "../wire/acp-shapes.js";
