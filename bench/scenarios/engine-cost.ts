/**
 * Scenario 5 and issue #2: the engine's cost per message in isolation (a request + answer
 * pair through CancelEngine with a no-op deliver), and how that cost changes as jobs in
 * flight, sessions and tree depth grow. Each part runs in a child process of its own.
 */
import type { PerMessage } from "../engine/per-message.js";
import type { Sweep } from "../engine/scaling.js";
import type { BenchOptions } from "../lib/options.js";
import { runProbe } from "../lib/probe.js";
import { ratio } from "../lib/stats.js";
import { fmt, goal, type ScenarioResult } from "../report/types.js";

/** How far from flat a sweep may be: slowest point / fastest point. */
export const FLAT_LIMIT = 1.5;

const spread = (sweep: Sweep) => ratio(Math.max(...sweep.ns), Math.min(...sweep.ns));

export async function engineCostScenario(options: BenchOptions): Promise<ScenarioResult> {
  const args = JSON.stringify({ pairs: options.enginePairs, rounds: options.engineRounds });
  const perMessage = await runProbe<PerMessage>("engine-probe", ["per-message", args]);
  const scaling = await runProbe<{ inFlight: Sweep; sessions: Sweep; depth: Sweep }>("engine-probe", [
    "scaling",
    args,
  ]);
  const sweeps = [
    { key: "inFlight", label: "jobs in flight", sweep: scaling.inFlight },
    { key: "sessions", label: "sessions with a running turn", sweep: scaling.sessions },
    { key: "depth", label: "depth of the job tree", sweep: scaling.depth },
  ] as const;
  return {
    id: "engine",
    title: "5. Engine cost per message, and scaling",
    tables: [
      {
        title: "Cost per message in isolation (request + answer through CancelEngine, no-op deliver)",
        columns: ["what", "ns / message"],
        rows: [
          ["CancelEngine.receive", fmt.ns(perMessage.engineNs)],
          ["anchor: JSON.parse of the same line", fmt.ns(perMessage.parseNs)],
          ["anchor: JSON.stringify of the same message", fmt.ns(perMessage.stringifyNs)],
        ],
        note: `The engine costs ${fmt.x(ratio(perMessage.engineNs, perMessage.parseNs))} of parsing the line it handles.`,
      },
      ...sweeps.map(({ label, sweep }) => ({
        title: `ns per message as ${label} grows`,
        columns: [label, ...sweep.points.map((p) => p.toLocaleString("en-US"))],
        rows: [
          ["ns / message", ...sweep.ns.map(fmt.ns)],
          ["vs first point", ...sweep.ns.map((ns) => fmt.x(ratio(ns, sweep.ns[0] as number)))],
        ],
      })),
    ],
    goals: sweeps.map(({ key, label, sweep }) =>
      goal({
        id: `scaling-${key}`,
        label: `flat: ${label}`,
        description: `Per-message cost flat as ${label} grows ${sweep.points[0]} → ${sweep.points[sweep.points.length - 1]?.toLocaleString("en-US")} (slowest / fastest point)`,
        measured: spread(sweep),
        anchor: `fastest point: ${fmt.ns(Math.min(...sweep.ns))} ns; slowest: ${fmt.ns(Math.max(...sweep.ns))} ns`,
        target: FLAT_LIMIT,
        kind: "max",
        unit: "x",
      }),
    ),
    data: { perMessage, scaling },
  };
}
