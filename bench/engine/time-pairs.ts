import type { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import { freshIds, type Message, request, result } from "./messages.js";

export interface PairShape {
  /** The side that issues the measured requests. */
  from: Side;
  method: string;
  /** Params of the i-th request (e.g. the session it belongs to). */
  params(i: number): Record<string, unknown>;
}

export const ECHO: PairShape = { from: "client", method: "bench/echo", params: () => ({}) };

/** A full GC before a timed loop (the probe runs with --expose-gc), so samples start alike. */
export function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Builds `count` request/answer pairs with fresh ids. */
export function buildPairs(count: number, shape: PairShape): { requests: Message[]; answers: Message[] } {
  const first = freshIds(count);
  const requests: Message[] = new Array(count);
  const answers: Message[] = new Array(count);
  for (let i = 0; i < count; i++) {
    requests[i] = request(first + i, shape.method, shape.params(i));
    answers[i] = result(first + i);
  }
  return { requests, answers };
}

/**
 * Nanoseconds per message for request + answer pairs through `engine` (its deliver is a
 * no-op); message objects are built before the clock starts.
 */
export function timePairs(engine: CancelEngine, count: number, shape: PairShape): number {
  const { requests, answers } = buildPairs(count, shape);
  const from = shape.from;
  const to: Side = from === "client" ? "agent" : "client";
  settle();
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    engine.receive(from, requests[i]);
    engine.receive(to, answers[i]);
  }
  return Number(process.hrtime.bigint() - started) / (2 * count);
}
