/** What `acp-cancel check` found, one cell per scenario and placement: plain data, written by `--json`. */

export type Placement = "direct" | "bridge";
export const PLACEMENTS: readonly Placement[] = ["direct", "bridge"];

/** ✔ the cell holds, ✘ it does not, – it could not be judged (the note says why). */
export type Verdict = "pass" | "fail" | "skip";

export interface LeftProcess {
  readonly pid: number;
  readonly command: string;
}

export interface Cell {
  readonly scenario: string;
  readonly placement: Placement;
  readonly verdict: Verdict;
  /** From Stop to the answer (or, for stdin closed and SIGTERM, to the exit); null when none came. */
  readonly stopToAnswerMs: number | null;
  /** What the editor got for the stopped prompt: `cancelled`, `end_turn`, `error -32800`, `none`, `exit 0`… */
  readonly outcome: string;
  /** Processes of the run still running once the cell settled (for `answer`: those the turn started). */
  readonly leftRunning: readonly LeftProcess[];
  /** Why it is ✘ or –, in a few words; empty for a plain ✔. */
  readonly note: string;
}

export interface Scorecard {
  readonly tool: "acp-cancel check";
  readonly version: string;
  readonly agent: {
    readonly command: readonly string[];
    /** From its `initialize` answer, when it gave one. */
    readonly name?: string;
    readonly agentVersion?: string;
    readonly protocolVersion?: number;
  };
  readonly modelServer: boolean;
  /** Cells not run, each with the reason (e.g. the tool cell without --model-server). */
  readonly leftOut: readonly { readonly scenario: string; readonly reason: string }[];
  readonly cells: readonly Cell[];
}

/** Whether every cell that ran holds. */
export function allHold(card: Scorecard): boolean {
  return card.cells.every((cell) => cell.verdict !== "fail");
}

/** What putting the bridge in front changed for one scenario, in a few words. */
export function bridgeChange(direct: Cell | undefined, bridge: Cell | undefined): string {
  if (direct === undefined || bridge === undefined) return "";
  if (direct.verdict === "skip" || bridge.verdict === "skip") return "not compared";
  if (direct.verdict === "fail" && bridge.verdict === "pass") return `fixes it (directly: ${direct.note || direct.outcome})`;
  if (direct.verdict === "pass" && bridge.verdict === "fail") return `REGRESSION: ${bridge.note || bridge.outcome}`;
  if (direct.verdict === "fail" && direct.outcome === "none" && bridge.stopToAnswerMs !== null) return `answers it (${bridge.outcome}), still fails`;
  if (direct.verdict === "fail") return "still fails";
  const stopped = direct.leftRunning.length - bridge.leftRunning.length;
  if (stopped > 0) return `stops ${stopped} more process${stopped === 1 ? "" : "es"}`;
  if (direct.stopToAnswerMs === null || bridge.stopToAnswerMs === null) return "nothing";
  const delta = Math.round(bridge.stopToAnswerMs - direct.stopToAnswerMs);
  return `${delta >= 0 ? "+" : ""}${delta} ms`;
}
