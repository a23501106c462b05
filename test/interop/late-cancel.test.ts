/**
 * A late `session/cancel`: the editor's Stop reaches the agent after the turn's prompt was already
 * answered (a Stop racing the turn's end, a retried cancel). Other clients' users report that it
 * poisons the session: the next prompt ends at once `cancelled` (compozy/compozy#522,
 * clawbench-dev/clawbench#433: two cancels 40 ms apart left a residual mark). Each cell runs, on one
 * session of today's real agent against the scripted model: prompt A to `end_turn`; one late
 * `session/cancel`, then prompt B; two late `session/cancel`s 40 ms apart, then prompt C. B and C
 * must end `end_turn` with the model's text, directly and through `acp-cancel bridge`.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { closeCell, type Driver } from "./drivers.js";
import { idles, type Message, until, type WireClient, within } from "./harness.js";
import { CLAUDE_V2, PEERS_INSTALLED, PEERS_NOTE, REAL_AGENTS, RUN_SLOW, SLOW_NOTE } from "./peers.js";
import { agentSide, allowDialogs, openCell, startCell, type RealCell, type RealPlacement, stopReasonOf } from "./real-cells.js";

const cellIt = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);

const wireOf = (driver: Driver) => (driver as Driver & { wire?: WireClient }).wire;
/** The gap between the two cancels of a retried Stop (clawbench-dev/clawbench#433). */
const RETRY_GAP_MS = 40;

interface Outcome {
  stopReason: unknown;
  ms: number;
  /** The model's text for this prompt reached the editor by its answer. */
  textShown: boolean;
  /** That text. */
  words: string;
  /** Turn requests the model saw for this prompt. */
  modelTurns: number;
}

/** Sends a prompt whose model answer is `words`; how it ended and how long it took. */
async function promptFor(cell: RealCell, words: string): Promise<Outcome> {
  cell.model.script = { kind: "finish", text: words };
  const turnsBefore = cell.model.turns.length;
  const started = Date.now();
  const answer = await within(cell.driver.prompt(cell.sessionId, `say ${words}`), 90_000);
  return {
    stopReason: answer === undefined ? "no answer in 90 s" : stopReasonOf(answer) ?? JSON.stringify(answer),
    ms: Date.now() - started,
    textShown: JSON.stringify(cell.driver.seen).includes(words),
    words,
    modelTurns: cell.model.turns.length - turnsBefore,
  };
}

const show = (o: Outcome) => `${String(o.stopReason)} in ${o.ms} ms, text ${o.textShown ? "shown" : "MISSING"}, ${o.modelTurns} model turn(s)`;

/** The editor's wire (direct) or the bridge's agent side, from line `from` on: what poisoning looks like. */
function wireSince(cell: RealCell, from: number): Message[] {
  const wire = wireOf(cell.driver);
  if (wire === undefined) return [];
  const lines: Message[] = cell.driver.placement === "bridge"
    ? wire.trace().filter((e) => e.message !== undefined).map((e) => ({ hop: e.hop, ...e.message }))
    : wire.log.map((e) => ({ dir: e.dir, ...e.message }));
  return lines.slice(from).filter((m) => m.method !== "session/update");
}
const lineCount = (cell: RealCell) => {
  const wire = wireOf(cell.driver);
  if (wire === undefined) return 0;
  return cell.driver.placement === "bridge" ? wire.trace().filter((e) => e.message !== undefined).length : wire.log.length;
};

/**
 * Sends `session/cancel` the moment the model's `words` reach the editor (before the prompt's
 * answer), and again 40 ms later; resolves once the second is sent (the next prompt must follow it
 * on the wire, or it is that prompt the second cancel stops).
 */
function cancelAsTextArrives(cell: RealCell, words: string): Promise<void> {
  const wire = wireOf(cell.driver);
  assert.ok(wire !== undefined);
  const before = wire.onIncoming;
  return new Promise((resolve) => {
    wire.onIncoming = (message) => {
      before(message);
      if (message.method !== "session/update" || !JSON.stringify(message).includes(words)) return;
      wire.onIncoming = before;
      cell.driver.cancel(cell.sessionId);
      setTimeout(() => resolve(cell.driver.cancel(cell.sessionId)), RETRY_GAP_MS);
    };
  });
}

/** A prompt whose model calls the shell tool (the agent set to ask first); dialogs opened and whether the tool ran. */
async function gate(cell: RealCell, name: string, before: () => Promise<void> | void) {
  const markerFile = join(cell.home, `gate-${name}-${cell.marker.slice(0, 8)}`);
  const dialogsBefore = cell.driver.dialogs.length;
  const from = lineCount(cell);
  await before();
  const program = "require('fs').writeFileSync(process.argv[1], 'ran')";
  cell.model.script = { kind: "permission", command: `'${process.execPath}' -e "${program}" '${markerFile}'`, text: `${name} words` };
  const turnsBefore = cell.model.turns.length;
  const started = Date.now();
  const answer = await within(cell.driver.prompt(cell.sessionId, "run the tool, asking first"), 90_000);
  const outcome: Outcome = {
    stopReason: answer === undefined ? "no answer in 90 s" : stopReasonOf(answer),
    ms: Date.now() - started,
    textShown: JSON.stringify(cell.driver.seen).includes(`${name} words`),
    words: `${name} words`,
    modelTurns: cell.model.turns.length - turnsBefore,
  };
  const dialogs = cell.driver.dialogs.length - dialogsBefore;
  const toolRan = existsSync(markerFile);
  process.stdout.write(`      gate ${name}: ${show(outcome)}, ${dialogs} dialog(s), tool ${toolRan ? "ran" : "did NOT run"}\n`);
  return { what: `gate ${name}`, outcome, wire: wireSince(cell, from), mustEnd: true, dialogs, toolRan };
}

/** An editor answers requests it does not know -32601 (qwen-code asks `craft/drainMidTurnQueue` between tool batches). */
function answerUnknownRequests(cell: RealCell): void {
  const wire = wireOf(cell.driver);
  assert.ok(wire !== undefined);
  const known = wire.onRequest;
  wire.onRequest = (message) => {
    if (message.method === "session/request_permission") return known(message);
    wire.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `Method not found: ${String(message.method)}` } });
    return undefined;
  };
}

async function twoCancels(cell: RealCell): Promise<void> {
  cell.driver.cancel(cell.sessionId);
  await new Promise((resolve) => setTimeout(resolve, RETRY_GAP_MS));
  cell.driver.cancel(cell.sessionId);
}

for (const agent of REAL_AGENTS) {
  describe(`interop, late session/cancel: ${agent.label}`, function () {
    this.timeout(400_000);
    for (const placement of ["direct", "bridge"] as RealPlacement[]) {
      // copilot-cli 1.0.102 directly: a late session/cancel sometimes ends the next, completed prompt `cancelled`
      // (step B in one run, D in another; 2026-11-29). Not yet pinned down to a cell that asserts it; the bridge cell runs.
      if (placement === "direct" && agent.recipe === "copilot-cli") continue;
      cellIt(`${placement}: session/cancel after a prompt's end (once, twice ${RETRY_GAP_MS} ms apart, with $/cancel_request, racing the end) leaves the next prompt and its permission dialog alone`, async () => {
        const cell = await openCell(agent, placement, { ask: true });
        answerUnknownRequests(cell);
        const steps: { what: string; outcome: Outcome; wire: Message[]; mustEnd: boolean }[] = [];
        const step = async (what: string, words: string, before: () => Promise<void> | void, mustEnd = true) => {
          const from = lineCount(cell);
          await before();
          const outcome = await promptFor(cell, words);
          steps.push({ what, outcome, wire: wireSince(cell, from), mustEnd });
          process.stdout.write(`      ${what}: ${show(outcome)}\n`);
        };
        try {
          await step("A (no cancel)", "alpha words", () => {});
          await step("B (1 late session/cancel)", "bravo words", () => cell.driver.cancel(cell.sessionId));
          await step("C (2 late session/cancel, 40 ms apart)", "charlie words", () => twoCancels(cell));
          // A late $/cancel_request for C's (answered) prompt with the session/cancel (docs/interop.md note 15).
          const lastPromptId = () => wireOf(cell.driver)?.log.filter((e) => e.dir === "out" && e.message.method === "session/prompt").at(-1)?.message.id;
          await step("D (late $/cancel_request for C + session/cancel)", "delta words", () => {
            wireOf(cell.driver)?.notify("$/cancel_request", { requestId: lastPromptId() });
            cell.driver.cancel(cell.sessionId);
          });
          // The Stop racing the turn's end: E may end either way; F must not.
          let racing: Promise<void> = Promise.resolve();
          await step("E (2 session/cancel racing its own end)", "echo words", () => {
            racing = cancelAsTextArrives(cell, "echo words");
          }, false);
          await step("F (after E's second cancel)", "foxtrot words", () => racing);
          // A permission gate after two late cancels: the dialog opens and its allow is honoured (the tool runs). The
          // session's first tool call: the scripted model gets no second one asked for in a session (claude, gemini).
          allowDialogs(cell.driver);
          const gAfter = await gate(cell, "golf", () => twoCancels(cell));
          steps.push(gAfter);
          const wire = wireOf(cell.driver);
          if (placement === "bridge" && wire !== undefined) {
            const sent = agentSide(wire, "bridge->agent");
            const count = (lines: Message[], method: string) => lines.filter((m) => m.method === method).length;
            const asked = wire.log.filter((e) => e.dir === "out").map((e) => e.message);
            process.stdout.write(
              `      the bridge sent the agent ${count(sent, "session/cancel")} of the editor's ${count(asked, "session/cancel")} session/cancel, ` +
              `${count(sent, "$/cancel_request")} of its ${count(asked, "$/cancel_request")} $/cancel_request\n`,
            );
          }
          for (const s of steps.filter((s) => s.mustEnd)) {
            assert.equal(s.outcome.stopReason, "end_turn", `${s.what}: ${show(s.outcome)}; wire: ${JSON.stringify(s.wire)}`);
            // Its text reached the editor, if only after the answer: opencode 1.18.33 once answered end_turn with
            // the text not yet sent (1 run in 5, after a late cancel), so it is looked for again once the cell is over.
            const shown = s.outcome.textShown || JSON.stringify(cell.driver.seen).includes(s.outcome.words);
            assert.ok(shown, `${s.what}: text missing; wire: ${JSON.stringify(s.wire)}`);
          }
          assert.equal(gAfter.dialogs, 1, "the gate's dialog opened after the late cancels");
          assert.ok(gAfter.toolRan, "the allowed tool ran after the late cancels");
          assert.deepEqual(cell.driver.problems(), []);
        } finally {
          await closeCell(cell);
        }
      });
    }
  });
}

// ACP v2 (claude-agent-acp with CLAUDE_AGENT_ACP_PROTOCOL=v2): a prompt's answer is its insertion; the
// work ends with an idle state_update. Directly, a `session/cancel` sent after the work went idle and right
// before the next prompt (the next line on the wire) withdraws that prompt: -32800, never inserted; 50 ms or
// more between them and it is inserted (5 of 5 runs, 2026-11-29). The bridge does not forward a client
// `session/cancel` for a session with nothing in flight (decisions.md, "Sessions"), which protects it.
for (const placement of ["direct", "bridge"] as const) {
  describe(`interop, late session/cancel: ${CLAUDE_V2.label}, ${placement}`, function () {
    this.timeout(300_000);
    const title = placement === "direct"
      ? "direct: session/cancel right before the next prompt, after the work went idle, withdraws that prompt (-32800; the agent's defect); a retry goes through"
      : `bridge: session/cancel after the work went idle (once, then twice ${RETRY_GAP_MS} ms apart) leaves the next work end_turn`;
    cellIt(title, async () => {
      const parts = await startCell(CLAUDE_V2, placement, {});
      const wire = wireOf(parts.driver);
      assert.ok(wire !== undefined);
      try {
        await wire.request("initialize", { protocolVersion: 2, info: { name: "interop-editor", version: "1.0.0" }, capabilities: {} }).answer;
        const sessionId = ((await wire.request("session/new", { cwd: parts.home }).answer).result as { sessionId: string }).sessionId;
        for (const { method, params } of parts.recipe.sessionSetup(sessionId)) await wire.request(method, params).answer;
        /** A prompt, then its work's idle stop reason; "not inserted" when the prompt was refused. */
        const work = async (words: string) => {
          parts.model.script = { kind: "finish", text: words };
          const ended = idles(wire).length;
          const started = Date.now();
          const from = wire.log.length;
          const answer = await wire.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `say ${words}` }] }).answer;
          if (!("result" in answer)) {
            const lines = wire.log.slice(Math.max(0, from - 3)).filter((e) => e.message.method !== "session/update");
            process.stdout.write(`      ${words}: NOT inserted after ${Date.now() - started} ms: ${JSON.stringify(lines)}\n`);
            return "not inserted";
          }
          await until(() => (idles(wire).length > ended ? true : undefined), `the work's idle state_update (${words})`, 90_000);
          const stopReason = idles(wire).at(-1);
          process.stdout.write(`      ${words}: idle ${String(stopReason)} ${Date.now() - started} ms after the prompt\n`);
          return stopReason;
        };
        const lateCancels = async (count: number) => {
          for (let i = 0; i < count; i++) {
            if (i > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_GAP_MS));
            wire.notify("session/cancel", { sessionId });
          }
        };
        assert.equal(await work("alpha words"), "end_turn");
        await lateCancels(1);
        const b = await work("bravo words");
        await lateCancels(2);
        const c = await work("charlie words");
        if (placement === "direct") {
          // A race inside the agent: it withdrew B or C in every run until CI met one where it did neither,
          // so up to four more prompts, each after one late cancel, before calling it fixed.
          const outcomes = [b, c];
          for (let i = 0; i < 4 && !outcomes.includes("not inserted"); i++) {
            await lateCancels(1);
            outcomes.push(await work(`retry ${i} words`));
          }
          assert.ok(outcomes.includes("not inserted"), `the agent withdrew none of ${outcomes.length} prompts after a late cancel (${outcomes.join(", ")}): fixed? update docs/interop.md`);
          assert.equal(await work("delta words"), "end_turn", "a prompt with no cancel before it");
        } else {
          assert.equal(b, "end_turn", "after one late session/cancel");
          assert.equal(c, "end_turn", "after two late session/cancel");
          const sent = agentSide(wire, "bridge->agent").filter((m) => m.method === "session/cancel").length;
          assert.equal(sent, 0, "no late session/cancel reached the agent");
        }
        assert.deepEqual(wire.unansweredOrRepeated(), []);
      } finally {
        await closeCell(parts);
      }
    });
  });
}
