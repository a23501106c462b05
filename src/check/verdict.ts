/** From what a cell saw to its verdict: pure, so the rules are tested in process and read in one place. */
import type { Cell, Placement, Verdict } from "./scorecard.js";

/** What one cell saw, times in ms from Stop. */
export interface Observation extends Pick<Cell, "scenario" | "placement" | "leftRunning"> {
  /**
   * `answer`: Stop holds when the prompt is answered once, with an accepted outcome, in time;
   * `exit`: Stop (stdin closed, SIGTERM) holds when the process the editor started exits in time.
   */
  readonly judge: "answer" | "exit";
  /** Outcomes of the prompt that count as stopped. */
  readonly accepted: readonly string[];
  readonly limitMs: number;
  /** The prompt's outcome when it was answered before Stop went out: nothing to judge. */
  readonly endedBeforeStop?: string;
  /** Answers to the stopped prompt (there should be one). */
  readonly answers: readonly { readonly atMs: number; readonly outcome: string }[];
  /** The started process's exit, when it exited within the limit. */
  readonly exit?: { readonly atMs: number; readonly outcome: string };
  /** What else was seen undone: the model request still open, a tool's side effect written after Stop. */
  readonly undone?: readonly string[];
}

/** A cell that never reached Stop, so nothing was left running: ✘ or – with why. */
export function unjudged(scenario: string, placement: Placement, verdict: Verdict, outcome: string, note: string): Cell {
  return { scenario, placement, leftRunning: [], verdict, stopToAnswerMs: null, outcome, note };
}

export function judge(seen: Observation): Cell {
  if (seen.endedBeforeStop !== undefined) {
    // A turn that ended is nothing to judge; a prompt that failed is the agent failing its turn.
    const failed = seen.endedBeforeStop.startsWith("error");
    const note = failed ? "the prompt failed before Stop went out" : "the turn ended before Stop (give a longer --prompt)";
    const cell = unjudged(seen.scenario, seen.placement, failed ? "fail" : "skip", seen.endedBeforeStop, note);
    return { ...cell, leftRunning: seen.leftRunning };
  }
  /** ✔ when no problem was seen; the note lists them. */
  const cell = (stopToAnswerMs: number | null, outcome: string, problems: readonly string[]): Cell => {
    const note = problems.filter((problem) => problem !== "").join("; ");
    const { scenario, placement, leftRunning } = seen;
    return { scenario, placement, leftRunning, verdict: note === "" ? "pass" : "fail", stopToAnswerMs, outcome, note };
  };
  const count = seen.leftRunning.length;
  const left = [count === 0 ? "" : `left ${count} process${count === 1 ? "" : "es"} running`, ...(seen.undone ?? [])];
  if (seen.judge === "exit") {
    if (seen.exit === undefined) return cell(null, "running", [`still running ${seen.limitMs} ms after Stop`]);
    return cell(seen.exit.atMs, seen.exit.outcome, left);
  }
  const [first, ...more] = seen.answers;
  if (first === undefined) {
    const why = seen.exit === undefined ? `no answer within ${seen.limitMs} ms` : `no answer; the agent ended (${seen.exit.outcome})`;
    return cell(null, "none", [why, ...left]);
  }
  return cell(first.atMs, first.outcome, [
    more.length > 0 ? `answered ${more.length + 1} times (${seen.answers.map((a) => a.outcome).join(", ")})` : "",
    seen.accepted.includes(first.outcome) ? "" : `not ${seen.accepted.join(" or ")}`,
    ...left,
  ]);
}

/** A JSON-RPC answer to a prompt, in a word: its stop reason, or `error CODE`. */
export function outcomeOf(answer: Record<string, unknown>): string {
  const error = answer.error as { code?: unknown } | undefined;
  if (error !== undefined) return `error ${String(error.code)}`;
  const result = answer.result as { stopReason?: unknown } | undefined;
  return typeof result?.stopReason === "string" ? result.stopReason : "answer without stopReason";
}
