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

/** Polls until `check` returns a value other than undefined (no timing assertion, just a wait). */
export async function eventually<T>(check: () => T | undefined, what: string, limitMs = 10_000): Promise<T> {
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
