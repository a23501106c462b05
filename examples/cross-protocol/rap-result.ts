/**
 * A RAP tool server's last step: POST the call's `tool_result` to the runtime's callback URL.
 * Sent whatever happened to the call (RAP allows a result after a cancel); a runtime that has
 * gone away is not an error for the tool.
 */
import type { Invocation } from "../../src/rap/index.js";

export async function postToolResult(invocation: Invocation, text: string): Promise<void> {
  await fetch(invocation.callback_url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      type: "tool_result",
      group_id: invocation.group_id,
      id: invocation.id,
      call_id: invocation.call_id,
      text,
    }),
  }).catch(() => undefined);
}
