import type { MedianInterval } from "../lib/stats.js";

/** What each scenario hands to the report: tables to print, goals to judge, raw data to keep. */
export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
  note?: string;
}

export interface Goal {
  id: string;
  description: string;
  measured: number;
  target: number;
  /** "max": measured must be <= target; "min": measured must be >= target. */
  kind: "max" | "min";
  unit: "x" | "ms" | "B" | "%";
  pass: boolean;
  /** Whether the goal is a ratio worth a bar in the chart. */
  chart: boolean;
  /** Short label for the chart. */
  label: string;
  /** The anchor's own figure (and the subject's), shown beside a ratio: "relay 275,318 req/s". */
  anchor?: string;
  /**
   * Where the median of per-round values can be, at 95% (for goals measured over rounds): how
   * far this run's noise leaves the verdict open. The verdict itself is the median's.
   */
  interval?: MedianInterval;
  /** The per-round values the median was taken over. */
  rounds?: number[];
  /**
   * Judged by the median of the per-round values pooled over this many full runs (the newest),
   * not by one run's: for figures whose run-to-run spread is wider than the margin (1 in flight).
   */
  poolRuns?: number;
  /** How the pooled verdict was reached: the runs and rounds it pooled. */
  pooled?: { runs: number; rounds: number };
}

export interface ScenarioResult {
  id: string;
  title: string;
  tables: Table[];
  goals: Goal[];
  data: unknown;
}

export function goal(
  spec: Omit<Goal, "pass" | "chart" | "label" | "anchor" | "interval"> & {
    chart?: boolean;
    label?: string;
    anchor?: string;
    interval?: MedianInterval | undefined;
  },
): Goal {
  const pass =
    Number.isFinite(spec.measured) &&
    (spec.kind === "max" ? spec.measured <= spec.target : spec.measured >= spec.target);
  const { interval, ...rest } = spec;
  const judged: Goal = { ...rest, pass, chart: spec.chart ?? spec.unit === "x", label: spec.label ?? spec.id };
  if (interval !== undefined) judged.interval = interval;
  return judged;
}

/** The goal's 95% interval as "0.91x–0.99x (9 rounds)", or "" when it has none. */
export function intervalText(g: Goal): string {
  if (g.poolRuns !== undefined) {
    const runs = g.pooled?.runs ?? 1;
    if (runs < g.poolRuns) return `provisional: ${runs} of ${g.poolRuns} runs`;
    return `${runs} runs pooled (${g.pooled?.rounds ?? 0} rounds)`;
  }
  const i = g.interval;
  if (i === undefined) return "";
  return `${formatValue(i.low, g.unit)}–${formatValue(i.high, g.unit)} (${i.samples} rounds)`;
}

/** True when the goal's 95% interval lies on both sides of its target: this run cannot settle it. */
export function isOpen(g: Goal): boolean {
  if (g.poolRuns !== undefined) return false;
  const i = g.interval;
  return i !== undefined && i.low <= g.target && i.high >= g.target && i.low !== i.high;
}

/** "PASS" or "MISS by 12%" (how far the measured value is from the target, relative to it). */
export function verdict(g: Goal): string {
  if (g.pass) return "PASS";
  if (!Number.isFinite(g.measured)) return "MISS (not measured)";
  const off = g.kind === "max" ? g.measured / g.target - 1 : 1 - g.measured / g.target;
  return `MISS by ${(off * 100).toFixed(off < 0.1 ? 1 : 0)}%`;
}

export function formatValue(value: number, unit: Goal["unit"]): string {
  if (!Number.isFinite(value)) return "n/a";
  if (unit === "x") return `${value.toFixed(value < 10 ? 2 : 1)}x`;
  if (unit === "%") return `${value.toFixed(2)}%`;
  if (unit === "ms") return `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
  return Math.abs(value) >= 10_240 ? `${(value / 1024).toFixed(0)} KB` : `${Math.round(value)} B`;
}

export const fmt = {
  rps: (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a"),
  ms: (v: number) =>
    Number.isFinite(v) ? (v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(2) : v.toFixed(0)) : "n/a",
  x: (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : "n/a"),
  ns: (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "n/a"),
  us: (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "n/a"),
  bytes: (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a"),
};

/** The six cells every echo table shows: throughput, p50 and p99 at 1 and at 64 in flight. */
export function loadCells(
  one: { rps: number; p50: number; p99: number },
  many: { rps: number; p50: number; p99: number },
): string[] {
  return [fmt.rps(one.rps), fmt.ms(one.p50), fmt.ms(one.p99), fmt.rps(many.rps), fmt.ms(many.p50), fmt.ms(many.p99)];
}
