import assert from "node:assert/strict";
import type { WireRecord } from "./spawn-peer.js";

type Message = Record<string, unknown>;

export function requestsIn(log: WireRecord[], direction: "out" | "in", method?: string): Message[] {
  return log
    .filter((r) => r.direction === direction && "method" in r.message && "id" in r.message)
    .map((r) => r.message)
    .filter((m) => method === undefined || m.method === method);
}

export function notificationsIn(log: WireRecord[], direction: "out" | "in", method: string): Message[] {
  return log
    .filter((r) => r.direction === direction && r.message.method === method && !("id" in r.message))
    .map((r) => r.message);
}

export function responsesTo(log: WireRecord[], direction: "out" | "in", id: unknown): Message[] {
  return log
    .filter((r) => r.direction === direction && !("method" in r.message) && r.message.id === id)
    .map((r) => r.message);
}

/** Every request seen in one direction got exactly one response in the other. */
export function assertEachAnsweredOnce(log: WireRecord[]): void {
  for (const [requests, answers] of [
    ["in", "out"],
    ["out", "in"],
  ] as const) {
    for (const request of requestsIn(log, requests)) {
      const count = responsesTo(log, answers, request.id).length;
      assert.equal(count, 1, `${String(request.method)} #${String(request.id)} answered ${count} times`);
    }
  }
}

/** Requests seen in one direction with no response in the other, yet. */
export function unanswered(log: WireRecord[]): Message[] {
  return (
    [
      ["in", "out"],
      ["out", "in"],
    ] as const
  ).flatMap(([requests, answers]) =>
    requestsIn(log, requests).filter((request) => responsesTo(log, answers, request.id).length === 0),
  );
}

/** How long a harness waits, before it closes, for answers still on their way. */
/**
 * How long a test waits for one event before it names what never came. Only a hang reaches it:
 * a loaded machine (two test runs beside builds, load 20 on 2 cores) makes waits of 10 s
 * ordinary, so it sits just under the suites' mocha timeout (60 s), never at a "surely done" time.
 */
export const HANG_LIMIT_MS = 45_000;
const ANSWERS_IN_FLIGHT_LIMIT_MS = HANG_LIMIT_MS;

/**
 * Waits until every request on the wire has its answer on the wire, or the limit passed: the
 * answers a test's body did not await itself (one the peer writes right after what the body
 * waited for, one for a request the body gave up on) may still be in a pipe or a handler when
 * the body ends, and closing the connection then would drop them from the log. Never throws: an
 * answer that never comes is still missing after the wait, and `assertEachAnsweredOnce` names it.
 */
export async function answersArrived(log: WireRecord[], limitMs = ANSWERS_IN_FLIGHT_LIMIT_MS): Promise<void> {
  await eventually(() => (unanswered(log).length === 0 ? true : undefined), "every answer", limitMs).catch(() => {});
}

/** Polls until `check` returns a value other than undefined (no timing assertion, just a wait). */
export async function eventually<T>(check: () => T | undefined, what: string, limitMs = HANG_LIMIT_MS): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The error code of a response, or undefined when it has none. */
export function errorCode(response: Message | undefined): number | undefined {
  return (response?.error as { code?: number } | undefined)?.code;
}
