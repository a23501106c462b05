/**
 * What each party of the cross-protocol demo saw, with the time it saw it. Processes other
 * than the demo's own report theirs as `CROSS {json}` lines on stderr; the demo gathers them.
 * Times are milliseconds on one machine-wide clock (performance.timeOrigin + performance.now()).
 */
export type Protocol = "ACP" | "MCP" | "RAP" | "A2A" | "AOS" | "ABP";

export type CrossEvent =
  /** A message from one party to another. */
  | { at: number; kind: "message"; protocol: Protocol; from: string; to: string; label: string }
  /** Something a party did or saw: work started, work stopped, a job settled. */
  | { at: number; kind: "note"; protocol: Protocol; party: string; label: string };

export const now = (): number => performance.timeOrigin + performance.now();

const PREFIX = "CROSS ";

/** A party's report that a piece of work ended: a process gone, a task's work stopped, a render cancelled. */
export const WORK_ENDED = /child process \d+ (ended|gone)|work stopped after|capabilities\/cancel-result: cancelled true/;

export function message(protocol: Protocol, from: string, to: string, label: string): CrossEvent {
  return { at: now(), kind: "message", protocol, from, to, label };
}

export function note(protocol: Protocol, party: string, label: string): CrossEvent {
  return { at: now(), kind: "note", protocol, party, label };
}

/** Reports an event from a subprocess, on stderr. */
export function report(event: CrossEvent): void {
  process.stderr.write(`${PREFIX}${JSON.stringify(event)}\n`);
}

/** The events in a subprocess's stderr text; other lines are left alone. */
export function eventsIn(stderr: string): CrossEvent[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith(PREFIX))
    .map((line) => JSON.parse(line.slice(PREFIX.length)) as CrossEvent);
}
