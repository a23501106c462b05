/** From what a cell saw to its verdict: pure, so the rules are tested in process and read in one place. */
import type { Cell, LeftProcess, Placement } from "./scorecard.js";

/** What one cell saw, times in ms from Stop. */
export interface Observation {
  readonly scenario: string;
  readonly placement: Placement;
  /**
   * `answer`: Stop holds when the prompt is answered once, with an accepted outcome, in time;
   * `exit`: Stop (stdin closed, SIGTERM) holds when the process the editor started exits in time.
   */
  readonly judge: "answer" | "exit";
  readonly accepted: readonly string[];
  readonly limitMs: number;
  /** The prompt's outcome when it was answered before Stop went out: nothing to judge. */
  readonly endedBeforeStop?: string;
  /** Answers to the stopped prompt (there should be one). */
  readonly answers: readonly { readonly atMs: number; readonly outcome: string }[];
  /** The started process's exit, when it exited within the limit. */
  readonly exit?: { readonly atMs: number; readonly outcome: string };
  /** Processes of the run still running once the cell settled (for `answer`: those the turn started). */
  readonly leftRunning: readonly LeftProcess[];
  /** What else was seen undone: the model request still open, a tool's side effect written after Stop. */
  readonly undone?: readonly string[];
}

export function judge(seen: Observation): Cell {
  const base = { scenario: seen.scenario, placement: seen.placement, leftRunning: seen.leftRunning };
  if (seen.endedBeforeStop !== undefined) {
    // A turn that ended is nothing to judge; a prompt that failed is the agent failing its turn.
    const failed = seen.endedBeforeStop.startsWith("error");
    const note = failed ? "the prompt failed before Stop went out" : "the turn ended before Stop (give a longer --prompt)";
    return { ...base, verdict: failed ? "fail" : "skip", stopToAnswerMs: null, outcome: seen.endedBeforeStop, note };
  }
  const processes = seen.leftRunning.length === 0
    ? ""
    : `left ${seen.leftRunning.length} process${seen.leftRunning.length === 1 ? "" : "es"} running`;
  const left = join(processes, ...(seen.undone ?? []));
  if (seen.judge === "exit") {
    if (seen.exit === undefined) {
      return { ...base, verdict: "fail", stopToAnswerMs: null, outcome: "running", note: `still running ${seen.limitMs} ms after Stop` };
    }
    return { ...base, verdict: left === "" ? "pass" : "fail", stopToAnswerMs: seen.exit.atMs, outcome: seen.exit.outcome, note: left };
  }
  const [first, ...more] = seen.answers;
  if (first === undefined) {
    const why = seen.exit === undefined ? `no answer within ${seen.limitMs} ms` : `no answer; the agent ended (${seen.exit.outcome})`;
    return { ...base, verdict: "fail", stopToAnswerMs: null, outcome: "none", note: join(why, left) };
  }
  const problems = [
    more.length > 0 ? `answered ${more.length + 1} times (${seen.answers.map((a) => a.outcome).join(", ")})` : "",
    seen.accepted.includes(first.outcome) ? "" : `not ${seen.accepted.join(" or ")}`,
    left,
  ].filter((problem) => problem !== "");
  return {
    ...base,
    verdict: problems.length === 0 ? "pass" : "fail",
    stopToAnswerMs: first.atMs,
    outcome: first.outcome,
    note: problems.join("; "),
  };
}

function join(...parts: string[]): string {
  return parts.filter((part) => part !== "").join("; ");
}

/** A JSON-RPC answer to a prompt, in a word: its stop reason, or `error CODE`. */
export function outcomeOf(answer: Record<string, unknown>): string {
  const error = answer.error as { code?: unknown } | undefined;
  if (error !== undefined) return `error ${String(error.code)}`;
  const result = answer.result as { stopReason?: unknown } | undefined;
  return typeof result?.stopReason === "string" ? result.stopReason : "answer without stopReason";
}
