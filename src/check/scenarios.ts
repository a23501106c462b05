/** The ways an editor stops a turn, one per row of the scorecard: when Stop goes out, what it is, what counts as stopped. */
import type { AgentRun } from "./agent-run.js";
import type { ModelScript } from "./model.js";
import type { Observation } from "./verdict.js";

export interface Scenario extends Pick<Observation, "judge" | "accepted"> {
  readonly name: string;
  readonly script: ModelScript;
  /**
   * When Stop goes out: right after the prompt; once the turn is under way (its first update);
   * once a permission dialog is open; once a process the turn started has run 1 s (its tool).
   */
  readonly when: "at-once" | "under-way" | "dialog" | "tool";
  /** Sends the Stop; returns the id of the prompt to judge when it is not the stopped one. */
  stop(run: AgentRun, sessionId: string, promptId: number): number | void;
  /** Judged on the session's next prompt (scripted to finish) instead of the stopped one. */
  readonly nextPrompt?: boolean;
  /** Once judged, the running turn is stopped by `session/cancel` before the cell settles. */
  readonly thenCancel?: boolean;
  /** Why it needs turns scripted by the model server, when it does (else it is left out, with this reason). */
  readonly scriptedFor?: string;
  /** What differs when ACP v2 is in force (docs/check.md). */
  readonly v2?: Partial<Pick<Scenario, "accepted" | "stop" | "thenCancel">>;
}

/** Stop as editors send it: `session/cancel`, and the open dialogs answered `cancelled`. */
export function sessionCancel(run: AgentRun, sessionId: string): void {
  run.wire.notify("session/cancel", { sessionId });
  run.wire.cancelDialogs();
}

const CANCELLED = ["cancelled"];

/** A scenario; unless it says otherwise, Stop is `session/cancel` once a held turn is under way, answered `cancelled`. */
function scenario(name: string, differs: Partial<Scenario> = {}): Scenario {
  return { name, judge: "answer", accepted: CANCELLED, script: "hold", when: "under-way", stop: sessionCancel, ...differs };
}

export const SCENARIOS: readonly Scenario[] = [
  scenario("session/cancel"),
  scenario("$/cancel_request", {
    // The request is cancelled by id: its cancelled result, or -32800 (Request Cancelled).
    accepted: [...CANCELLED, "error -32800"],
    stop: (run, _sessionId, promptId) => run.wire.notify("$/cancel_request", { requestId: promptId }),
    // In v2 a prompt's request ends once the prompt is inserted: what `$/cancel_request` can stop is
    // a prompt still queued behind the running turn. It must be withdrawn, -32800.
    v2: {
      accepted: ["error -32800"],
      stop: (run, sessionId) => {
        const queued = run.wire.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "And then this." }] });
        run.wire.notify("$/cancel_request", { requestId: queued.id });
        return queued.id;
      },
      thenCancel: true,
    },
  }),
  // v2: a prompt the cancel reached before its insertion is withdrawn (-32800); no turn ran.
  scenario("cancel right after the prompt", { when: "at-once", v2: { accepted: [...CANCELLED, "error -32800"] } }),
  scenario("stdin closed mid-turn", { judge: "exit", accepted: [], stop: (run) => void run.child.stdin.end() }),
  scenario("SIGTERM mid-turn", { judge: "exit", accepted: [], stop: (run) => void run.child.kill("SIGTERM") }),
  scenario("session/cancel while a tool runs", { script: "shell", when: "tool", scriptedFor: "the model must call a shell tool" }),
  scenario("session/cancel with a dialog open", {
    script: "permission",
    when: "dialog",
    scriptedFor: "the model must make the agent ask permission",
  }),
  scenario("next prompt after a cancel", { accepted: ["end_turn"], nextPrompt: true, scriptedFor: "the next turn must finish on cue" }),
];

/** The scenario as it runs under `protocol`. */
export function inForce(scenario: Scenario, protocol: number): Scenario {
  return protocol === 2 && scenario.v2 !== undefined ? { ...scenario, ...scenario.v2 } : scenario;
}
