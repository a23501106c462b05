/**
 * The engine's cost per message (request + answer, no-op deliver) as the state around it
 * grows: jobs in flight, sessions with a running turn, and depth of the job tree.
 */
import { CancelEngine } from "../../src/index.js";
import type { RequestJob, Side } from "../../src/acp/index.js";
import { median } from "../lib/stats.js";
import { freshIds, request } from "./messages.js";
import { ECHO, type PairShape, timePairs } from "./time-pairs.js";

export interface Sweep {
  /** The size of the state for each point (in flight, sessions, depth). */
  points: number[];
  /** Median ns per message at each point. */
  ns: number[];
}

interface Fixture {
  engine: CancelEngine;
  shape: PairShape;
}

function withInFlight(count: number): Fixture {
  const engine = new CancelEngine(() => {});
  const first = freshIds(count);
  for (let i = 0; i < count; i++) engine.receive("client", request(first + i, "bench/hold"));
  return { engine, shape: ECHO };
}

function withSessions(count: number): Fixture {
  const engine = new CancelEngine(() => {});
  const first = freshIds(count);
  for (let i = 0; i < count; i++) {
    engine.receive("client", request(first + i, "session/prompt", { sessionId: `s${i}`, prompt: [] }));
  }
  // The agent's requests of every session nest under that session's running turn.
  const shape: PairShape = {
    from: "agent",
    method: "fs/read_text_file",
    params: (i) => ({ sessionId: `s${i % count}`, path: "/tmp/a.ts" }),
  };
  return { engine, shape };
}

function withDepth(depth: number): Fixture {
  let current: RequestJob | undefined;
  const engine = new CancelEngine(() => {});
  const first = freshIds(depth);
  // Sides alternate down the chain and the deepest job is always the client's (a prompt's
  // place), so every point measures the agent's requests, as ACP nests them.
  let side: Side = depth % 2 === 1 ? "client" : "agent";
  for (let level = 0; level < depth; level++) {
    engine.receive(side, request(first + level, "bench/hold"));
    current = engine.job(side, first + level);
    side = side === "client" ? "agent" : "client";
  }
  // Each measured request is issued from inside the deepest handler (its params carry the mark).
  const deepest = current;
  const params = (): Record<string, unknown> => {
    const fresh = {};
    if (deepest !== undefined) engine.nestUnder(fresh, deepest);
    return fresh;
  };
  return { engine, shape: { ...ECHO, from: "agent", params } };
}

function sweep(points: number[], make: (n: number) => Fixture, pairs: number, rounds: number): Sweep {
  const fixtures = points.map(make);
  for (const f of fixtures) timePairs(f.engine, pairs, f.shape); // warm-up
  const samples: number[][] = points.map(() => []);
  for (let r = 0; r < rounds; r++) {
    // Rotate the order so that no point always runs first.
    for (let k = 0; k < points.length; k++) {
      const i = (k + r) % points.length;
      const f = fixtures[i] as Fixture;
      samples[i]?.push(timePairs(f.engine, pairs, f.shape));
    }
  }
  return { points, ns: samples.map((s) => median(s)) };
}

export function scaling(pairs: number, rounds: number) {
  return {
    inFlight: sweep([1, 100, 1_000, 10_000, 100_000], withInFlight, pairs, rounds),
    sessions: sweep([1, 10, 100, 1_000], withSessions, pairs, rounds),
    depth: sweep([1, 10, 100], withDepth, pairs, rounds),
  };
}
