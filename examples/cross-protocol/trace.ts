import type { CrossEvent } from "./events.js";

/**
 * The demo's events as an `acp-cancel trace` file: one JSON object per line, `t` in ms since the
 * first event, a `hop` ("from->to") and a `label` for messages, a `note` and its `party` for
 * the rest, and the protocol of each.
 */
export function toTrace(events: readonly CrossEvent[]): string {
  const start = events[0]?.at ?? 0;
  return events
    .map((event) => {
      const t = Math.round((event.at - start) * 1000) / 1000;
      return JSON.stringify(
        event.kind === "message"
          ? { t, hop: `${event.from}->${event.to}`, label: event.label, protocol: event.protocol }
          : { t, note: event.label, party: event.party, protocol: event.protocol },
      );
    })
    .join("\n")
    .concat("\n");
}
