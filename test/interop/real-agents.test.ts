/**
 * Today's agents (codex-acp, claude-agent-acp, gemini-cli, qwen-code, opencode, copilot-cli), stopped while
 * doing real work against the scripted model (src/check/model-server): directly, through
 * `acp-cancel bridge`, and with an embedded `withCancellation` client. Each cell asserts the effect
 * (answered once, the model request closed, the tool's processes gone, its marker file never
 * written). A direct cell asserts what the agent does alone, defects included (KNOWN_DEFECTS), so
 * that a fixed agent shows up as a failing cell to update docs/interop.md from.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { delayedMarkerCommand } from "../../src/check/index.js";
import { descendantsOf } from "../../src/os/index.js";
import { closeCell, type Driver } from "./drivers.js";
import { type Message, until, type WireClient, within } from "./harness.js";
import { PEERS_INSTALLED, PEERS_NOTE, REAL_AGENTS, type RealAgent, RUN_SLOW, SLOW_NOTE } from "./peers.js";
import { CHECK_CELLS, type CheckCell, failsDirectly } from "./verdicts.js";
import { agentSide, allowDialogs, handshakeOf, openCell, processesRunning, type RealCell, type RealPlacement, startCell, stopReasonOf } from "./real-cells.js";

/**
 * What an agent gets wrong on its own beyond check's cells (docs/interop.md); the bridge fixes each.
 * The defects that are check cells (a direct ✘) come from verdicts.ts, so that check and this suite
 * are held to the same table.
 */
type Defect =
  | "cannot load its sessions"
  | "answers session/close before the turn it stops"
  | "an early $/cancel_request's turn takes the next prompt"
  | "drops a $/cancel_request sent with its prompt";
const KNOWN_DEFECTS: Partial<Record<RealAgent["recipe"], readonly Defect[]>> = {
  "codex-acp": ["an early $/cancel_request's turn takes the next prompt"],
  // claude-agent-acp 0.101.0 (v1): its prompt handler listens for the abort of a signal that the SDK
  // already aborted when both lines arrive together (docs/interop.md, note 15).
  "claude-agent-acp": ["drops a $/cancel_request sent with its prompt"],
  // gemini-cli 0.61 often answers session/load "No previous sessions found for this project" (note 12).
  "gemini-cli": ["cannot load its sessions"],
  // opencode 1.18.33 answers session/close 20-30 ms before the prompt of the turn it stops.
  "opencode": ["answers session/close before the turn it stops"],
};
/**
 * What an agent does alone with a prompt sent while its turn streams, with no cancel (goose #11651): `queues` it
 * behind the turn, which streams on (claude-agent-acp and codex-acp on purpose); `cancels` the turn itself; or `errors`
 * (qwen-code 0.24.4 answers the replaced turn -32603 "Internal error", not `cancelled`).
 */
const REPLACED_TURN: Partial<Record<RealAgent["recipe"], "queues" | "cancels" | "errors">> = {
  "codex-acp": "queues",
  "claude-agent-acp": "queues",
  "opencode": "queues",
  "gemini-cli": "cancels",
  "qwen-code": "errors",
  "copilot-cli": "cancels",
};
const REPLACED_HOW = {
  queues: "waits behind the old turn, which streams on unanswered",
  cancels: "ends the old turn cancelled and runs",
  errors: "ends the old turn with -32603, not cancelled (the agent's defect), and runs",
};
/**
 * Fresh sessions the direct early-cancel cell tries, for an agent that loses the cancel only in a race (more often on
 * a busy machine): copilot-cli 1.0.102 lost a session/cancel written right behind its prompt 5 times in 13, and in
 * 0 of 12 in a quiet run (2026-11-29). Each try must end one of those two ways.
 */
const EARLY_CANCEL_TRIES: Partial<Record<RealAgent["recipe"], number>> = { "copilot-cli": 6 };
/** The agents that advertise `sessionCapabilities.close` (asserted by the close cell). */
const CLOSERS: readonly RealAgent["recipe"][] = ["codex-acp", "claude-agent-acp", "opencode"];
const defect = (agent: RealAgent, which: Defect | CheckCell) =>
  (CHECK_CELLS as readonly string[]).includes(which)
    ? failsDirectly(agent.recipe, which as CheckCell)
    : KNOWN_DEFECTS[agent.recipe]?.includes(which as Defect) === true;

/** How long the shell tool waits before writing its marker: well past the Stop and the bridge's cleanup. */
const MARKER_DELAY_MS = 5000;
/** Only catches hangs: these agents take seconds to start on a busy 2-core machine. */
const CELL_TIMEOUT_MS = 180_000;
const ANSWER_LIMIT_MS = 15_000;

const cellIt = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);

const wireOf = (driver: Driver) => (driver as Driver & { wire?: WireClient }).wire;

/** The turn is streaming: the model request is open and its text reached the editor. */
async function streaming(cell: RealCell): Promise<void> {
  await until(
    () => (cell.model.streaming.length > 0 && JSON.stringify(cell.driver.seen).includes("working") ? true : undefined),
    "the model streaming to the editor",
    60_000,
  );
}

/** Every request both ways answered once, and (bridge) each cancel sent to the agent at most once. */
function assertClean(cell: RealCell): void {
  assert.deepEqual(cell.driver.problems(), []);
  const wire = wireOf(cell.driver);
  if (cell.driver.placement !== "bridge" || wire === undefined) return;
  const toAgent = agentSide(wire, "bridge->agent");
  const sessionCancels = toAgent.filter((m) => m.method === "session/cancel").length;
  const promptCancels = new Map<unknown, number>();
  for (const m of toAgent.filter((m) => m.method === "$/cancel_request")) {
    const id = (m.params as { requestId?: unknown }).requestId;
    promptCancels.set(id, (promptCancels.get(id) ?? 0) + 1);
  }
  assert.ok(sessionCancels <= 1, `session/cancel sent to the agent ${sessionCancels} times`);
  for (const [id, count] of promptCancels) assert.equal(count, 1, `$/cancel_request for ${String(id)} sent ${count} times`);
}

/** The Stop's effect: the prompt answered `cancelled` (once: assertClean), and the model request closed by the agent. */
async function stoppedAndClosed(cell: RealCell, answer: Promise<Message>): Promise<void> {
  assert.equal(stopReasonOf(await within(answer, ANSWER_LIMIT_MS)), "cancelled");
  await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the model request closed by the agent");
}

async function nextTurnShowsText(cell: RealCell): Promise<void> {
  cell.model.script = { kind: "finish", text: "the next turn's words" };
  const answer = await within(cell.driver.prompt(cell.sessionId, "again"), 60_000);
  assert.equal(stopReasonOf(answer), "end_turn", JSON.stringify(answer));
  assert.ok(JSON.stringify(cell.driver.seen).includes("the next turn's words"), "the model's text reached the editor");
}

for (const agent of REAL_AGENTS) {
  describe(`interop, real agent: ${agent.label}`, function () {
    this.timeout(CELL_TIMEOUT_MS);
    for (const placement of ["direct", "bridge", "embedded"] as RealPlacement[]) {
      cellIt(`${placement}: Stop by session/cancel mid-stream is answered cancelled once, the model request is closed, and the next prompt shows the model's text`, async () => {
        const cell = await openCell(agent, placement, { script: { kind: "hold" } });
        try {
          const turn = cell.driver.startPrompt(cell.sessionId, "keep talking");
          await streaming(cell);
          cell.driver.cancel(cell.sessionId);
          await stoppedAndClosed(cell, turn.answer);
          assert.ok(cell.model.closedRequests.length > 0);
          await nextTurnShowsText(cell);
          assertClean(cell);
        } finally {
          await closeCell(cell);
        }
      });

      const ignores = placement === "direct" && defect(agent, "$/cancel_request");
      cellIt(`${placement}: Stop by $/cancel_request mid-stream ${ignores ? "is ignored by the agent (no answer, the model stream stays open), then session/cancel ends it" : "is answered cancelled once and the model request is closed"}`, async () => {
        const cell = await openCell(agent, placement, { script: { kind: "hold" } });
        try {
          const turn = cell.driver.startPrompt(cell.sessionId, "keep talking");
          await streaming(cell);
          turn.cancelRequest();
          if (ignores) {
            // A later request answered while the turn is not: ignored (by order, not by time).
            await wireOf(cell.driver)?.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
            assert.equal(cell.model.streaming.length, 1, "the model stream is still open");
            cell.driver.cancel(cell.sessionId);
          }
          await stoppedAndClosed(cell, turn.answer);
          assertClean(cell);
        } finally {
          await closeCell(cell);
        }
      });

      const survives = placement !== "bridge" && defect(agent, "session/cancel while a tool runs");
      cellIt(`${placement}: Stop while a shell tool runs ${survives ? "leaves the tool running: its delayed marker file is written (the agent's defect)" : "stops the tool's whole process tree; its delayed marker file is never written"}`, async () => {
        const cell = await openCell(agent, placement, { script: { kind: "hold" } });
        const markerFile = join(cell.home, `late-${cell.marker.slice(0, 8)}`);
        // codex hands the running tool's first output to the model after 250 ms; the model then holds.
        cell.model.script = { kind: "shell", command: delayedMarkerCommand(process.execPath, markerFile, MARKER_DELAY_MS), then: "hold" };
        allowDialogs(cell.driver);
        try {
          const turn = cell.driver.startPrompt(cell.sessionId, "run the tool");
          const tools = await until(() => {
            const found = processesRunning(cell.marker, markerFile);
            return found.length > 0 ? found : undefined;
          }, "the tool running", 60_000);
          const startedAt = Date.now();
          if (cell.model.turns[0]?.toolCalled === "exec_command") {
            await until(() => (cell.model.turns.length >= 2 ? true : undefined), "the model asked again while the tool runs");
          }
          cell.driver.cancel(cell.sessionId);
          assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
          const answeredAt = Date.now();
          if (survives) {
            await until(() => (existsSync(markerFile) ? true : undefined), "the marker written by the surviving tool", MARKER_DELAY_MS + 10_000);
          } else {
            await until(() => (processesRunning(cell.marker, markerFile).length === 0 ? true : undefined), "the tool's processes gone", 30_000);
            process.stdout.write(`      (${cell.model.turns[0]?.toolCalled}: ${tools.length} tool processes gone ${Date.now() - answeredAt} ms after the cancelled answer)\n`);
            // The marker's time comes and goes: nothing wrote it.
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + MARKER_DELAY_MS + 1000 - Date.now())));
            assert.equal(existsSync(markerFile), false, "the tool's delayed side effect never happened");
          }
          assertClean(cell);
        } finally {
          await closeCell(cell);
        }
      });

      cellIt(`${placement}: Stop with a permission dialog open: the dialog is answered cancelled once, the turn ends cancelled, the tool never runs`, async () => {
        const cell = await openCell(agent, placement, { script: { kind: "hold" }, ask: true });
        const markerFile = join(cell.home, `asked-${cell.marker.slice(0, 8)}`);
        cell.model.script = { kind: "permission", command: delayedMarkerCommand(process.execPath, markerFile, 0) };
        try {
          const turn = cell.driver.startPrompt(cell.sessionId, "run the tool, asking first");
          const dialog = await until(() => cell.driver.dialogs[0], "the permission dialog", 60_000);
          cell.driver.cancel(cell.sessionId);
          const wire = wireOf(cell.driver);
          if (placement === "bridge" && wire !== undefined) {
            // acp-cancel tells the editor its dialog is cancelled; a polite editor then answers it.
            await until(() => (wire.received("$/cancel_request").length > 0 ? true : undefined), "$/cancel_request for the dialog");
          }
          // ACP: the client answers its open dialogs `cancelled` on Stop (embedded: the engine aborts the handler).
          if (placement !== "embedded") dialog.answer({ outcome: "cancelled" });
          assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
          assert.deepEqual(processesRunning(cell.marker, markerFile), [], "the tool never ran");
          assert.equal(existsSync(markerFile), false);
          if (placement === "bridge" && wire !== undefined) {
            const asked = agentSide(wire, "agent->bridge").filter((m) => m.method === "session/request_permission");
            const answered = agentSide(wire, "bridge->agent").filter((m) => !("method" in m) && m.id === asked[0]?.id);
            assert.deepEqual(answered.map((m) => (m.result as Message).outcome), [{ outcome: "cancelled" }]);
          }
          assertClean(cell);
        } finally {
          await closeCell(cell);
        }
      });

      const loses = placement === "direct" && defect(agent, "cancel right after the prompt");
      const tries = loses ? EARLY_CANCEL_TRIES[agent.recipe] ?? 1 : 1;
      const racy = tries > 1;
      cellIt(`${placement}: a cancel right after the prompt, before the model's first byte, ${!loses ? "is answered cancelled once (claude-agent-acp #442)" : racy ? `in each of ${tries} fresh sessions is either answered cancelled (the model request closed) or lost: no answer, the model request open (the agent's race, as claude-agent-acp #442); never end_turn (copilot-cli #4561)` : "is not answered cancelled: no answer, or an internal error (the agent's defect, as claude-agent-acp #442)"}`, async () => {
        let cell = await openCell(agent, placement, { script: { kind: "slow", delayMs: 120_000 } });
        try {
          let turn = cell.driver.startPrompt(cell.sessionId, "think first");
          cell.driver.cancel(cell.sessionId);
          if (racy) {
            const outcomes: string[] = [];
            for (let attempt = 1; ; attempt++) {
              // By order, not by time: a later request answered, then the prompt's answer or none.
              await wireOf(cell.driver)?.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
              const early = await within(turn.answer, 5000);
              if (early === undefined) {
                assert.equal(cell.model.streaming.length, 1, "a lost cancel: the model request still open");
                outcomes.push("lost");
              } else {
                assert.equal(stopReasonOf(early), "cancelled", JSON.stringify(early));
                await until(() => (cell.model.streaming.length === 0 ? true : undefined), "no model request left open");
                outcomes.push("cancelled");
              }
              if (attempt >= tries) break;
              await closeCell(cell);
              cell = await openCell(agent, placement, { script: { kind: "slow", delayMs: 120_000 } });
              turn = cell.driver.startPrompt(cell.sessionId, "think first");
              cell.driver.cancel(cell.sessionId);
            }
            process.stdout.write(`      (the early-cancelled prompts: ${outcomes.filter((o) => o === "lost").length} of ${tries} lost)\n`);
            return;
          }
          if (loses) {
            // A later request answered while the prompt is not: the cancel was lost (by order, not by time).
            await wireOf(cell.driver)?.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
            // Seen: no answer at all (15 s and more), or -32603 "Internal service failure"; never `cancelled`.
            const early = await within(turn.answer, 5000);
            assert.notEqual(stopReasonOf(early), "cancelled", JSON.stringify(early));
            process.stdout.write(`      (the early-cancelled prompt: ${early === undefined ? "no answer" : JSON.stringify(early).slice(0, 120)})\n`);
            return;
          }
          assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
          // Embedded, the engine answers `cancelled` after its grace, but cannot make an agent that lost the cancel
          // (copilot-cli 1.0.102, 1 of 3 runs) close its model request; the bridge stops such an agent's turn.
          if (placement === "embedded" && EARLY_CANCEL_TRIES[agent.recipe] !== undefined) return;
          await until(() => (cell.model.streaming.length === 0 ? true : undefined), "no model request left open");
          const wire = wireOf(cell.driver);
          if (placement === "bridge" && wire !== undefined) {
            // v1: the editor's session/cancel is the one cancel; no $/cancel_request added for the
            // prompt (codex-acp 2.6 let the next prompt join the cancelled turn when it got both).
            assert.deepEqual(agentSide(wire, "bridge->agent").filter((m) => m.method === "$/cancel_request"), []);
          }
          await nextTurnShowsText(cell);
          assertClean(cell);
        } finally {
          await closeCell(cell);
        }
      });

      // The same race with `$/cancel_request`, for the agents that honour it mid-stream (the others
      // are covered above: the bridge and the engine send them `session/cancel`).
      const dropsEarly = placement === "direct" && defect(agent, "drops a $/cancel_request sent with its prompt");
      if (!defect(agent, "$/cancel_request")) {
        cellIt(`${placement}: $/cancel_request right after the prompt, before the model's first byte, ${dropsEarly ? "gets no answer and the turn runs on (the agent's defect, claude-agent-acp #442)" : "is answered cancelled once, promptly, and the next prompt shows the model's text (claude-agent-acp #442)"}`, async () => {
          const cell = await openCell(agent, placement, { script: { kind: "slow", delayMs: 120_000 } });
          try {
            // Both lines in one write, so that the agent reads them together, as it mostly reads an
            // editor's two writes of one tick (sent apart, claude-agent-acp honoured 1 of 20).
            const stdin = cell.driver.child.stdin;
            stdin.cork();
            const turn = cell.driver.startPrompt(cell.sessionId, "think first");
            turn.cancelRequest();
            setImmediate(() => stdin.uncork());
            if (dropsEarly) {
              // The turn reached the model: the cancel is lost, not late. Then a later request is
              // answered while the prompt is not (by order, not by time).
              await until(() => (cell.model.streaming.length > 0 ? true : undefined), "the model request of the cancelled turn", 60_000);
              await wireOf(cell.driver)?.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
              assert.equal(await within(turn.answer, 2000), undefined, "no answer to the early-cancelled prompt");
              return;
            }
            assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
            await until(() => (cell.model.streaming.length === 0 ? true : undefined), "no model request left open");
            const wire = wireOf(cell.driver);
            if (placement === "bridge" && wire !== undefined) {
              // v1: the editor's `$/cancel_request` reaches the agent as the one `session/cancel` (both at
              // once: codex-acp 2.6 lets the next prompt join the cancelled turn).
              const stops = agentSide(wire, "bridge->agent").filter((m) => m.method === "$/cancel_request" || m.method === "session/cancel");
              assert.deepEqual(stops.map((m) => m.method), ["session/cancel"]);
            }
            await nextTurnShowsText(cell);
            assertClean(cell);
          } finally {
            await closeCell(cell);
          }
        });
      }

      if (placement === "direct" && defect(agent, "an early $/cancel_request's turn takes the next prompt")) {
        // codex-acp answers a prompt cancelled by $/cancel_request at once, even while its turn/start
        // is in flight; the turn then starts, the next prompt is steered into it, and the late
        // turn/interrupt ends both. Only a cancel landing in that window shows it (5-50 ms after the
        // prompt here), so the cell tries a few delays. session/cancel alone never did this.
        cellIt("direct: $/cancel_request soon after the prompt is answered cancelled, and the next prompt is answered cancelled too: it joined the cancelled turn, which the agent interrupted late (the agent's defect)", async () => {
          const cell = await openCell(agent, placement, { script: { kind: "slow", delayMs: 120_000 } });
          try {
            const outcomes: string[] = [];
            for (const delayMs of [5, 10, 20, 30, 40, 15, 25, 50, 5, 10, 20, 30]) {
              cell.model.script = { kind: "slow", delayMs: 120_000 };
              const turn = cell.driver.startPrompt(cell.sessionId, "think first");
              await new Promise((resolve) => setTimeout(resolve, delayMs));
              turn.cancelRequest();
              assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
              cell.model.script = { kind: "finish", text: "the next turn's words" };
              const next = stopReasonOf(await within(cell.driver.prompt(cell.sessionId, "again"), 60_000));
              outcomes.push(`${delayMs} ms: ${String(next)}`);
              if (next === "cancelled") break;
            }
            process.stdout.write(`      (the next prompt after an early $/cancel_request: ${outcomes.join(", ")})\n`);
            assert.match(outcomes.at(-1) ?? "", /cancelled$/, "the defect shows within a few tries");
            assertClean(cell);
          } finally {
            await closeCell(cell);
          }
        });
      }

      if (placement === "embedded") continue;
      const alone = REPLACED_TURN[agent.recipe];
      if (alone !== undefined) {
        const stops = placement === "bridge";
        cellIt(`${placement}${stops ? " --prompt-stops-turn" : ""}: a new prompt sent alone while the turn streams (goose #11651) ${stops ? "stops the old turn (cancelled once, its model request closed), then runs and shows the model's text" : REPLACED_HOW[alone]}`, async () => {
          const cell = await openCell(agent, placement, { script: { kind: "hold" }, bridgeArgs: stops ? ["--prompt-stops-turn"] : [] });
          try {
            const old = cell.driver.startPrompt(cell.sessionId, "keep talking");
            await streaming(cell);
            cell.model.script = { kind: "finish", text: "the replacement's words" };
            const replacement = cell.driver.startPrompt(cell.sessionId, "do this instead");
            if (!stops && alone === "queues") {
              // By order, not by time: a later request is answered while neither prompt is.
              await wireOf(cell.driver)?.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
              assert.equal(await within(old.answer, 1000), undefined, "the old turn is not answered");
              assert.equal(cell.model.streaming.length, 1, "the old turn's model stream is still open");
              assert.equal(await within(replacement.answer, 10), undefined, "the new prompt waits");
              return;
            }
            if (!stops) {
              const ended = await within(old.answer, ANSWER_LIMIT_MS);
              if (alone === "errors") assert.equal((ended?.error as { code?: unknown } | undefined)?.code, -32603, JSON.stringify(ended));
              else assert.equal(stopReasonOf(ended), "cancelled", JSON.stringify(ended));
              await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the old turn's model request closed");
            } else {
              await stoppedAndClosed(cell, old.answer);
            }
            assert.equal(stopReasonOf(await within(replacement.answer, 60_000)), "end_turn");
            assert.ok(JSON.stringify(cell.driver.seen).includes("the replacement's words"), "the model's text reached the editor");
            const wire = wireOf(cell.driver);
            assert.ok(wire !== undefined);
            if (!stops) return assertClean(cell);
            const toAgent = agentSide(wire, "bridge->agent").filter((m) => m.method === "session/cancel" || m.method === "session/prompt");
            assert.deepEqual(toAgent.map((m) => m.method), ["session/prompt", "session/cancel", "session/prompt"]);
            assertClean(cell);
          } finally {
            await closeCell(cell);
          }
        });
      }

      if (CLOSERS.includes(agent.recipe)) {
        const early = placement === "direct" && defect(agent, "answers session/close before the turn it stops");
        cellIt(`${placement}: session/close while a shell tool runs stops the tool's process tree and answers the turn cancelled once, ${early ? "after the close's answer (the agent's defect)" : "before the close's answer"}`, async () => {
          const cell = await openCell(agent, placement, { script: { kind: "hold" } });
          const wire = wireOf(cell.driver);
          assert.ok(wire !== undefined);
          const advertised = wire.log.find((e) => e.dir === "in" && (e.message.result as Message | undefined)?.agentCapabilities !== undefined);
          assert.match(JSON.stringify(advertised?.message), /"sessionCapabilities":\{[^]*"close":\{\}/, "the agent advertises session/close");
          const markerFile = join(cell.home, `closed-${cell.marker.slice(0, 8)}`);
          cell.model.script = { kind: "shell", command: delayedMarkerCommand(process.execPath, markerFile, MARKER_DELAY_MS), then: "hold" };
          allowDialogs(cell.driver);
          try {
            const turn = cell.driver.startPrompt(cell.sessionId, "run the tool");
            await until(() => (processesRunning(cell.marker, markerFile).length > 0 ? true : undefined), "the tool running", 60_000);
            const startedAt = Date.now();
            if (cell.model.turns[0]?.toolCalled === "exec_command") {
              await until(() => (cell.model.turns.length >= 2 ? true : undefined), "the model asked again while the tool runs");
            }
            const order: string[] = [];
            const close = wire.request("session/close", { sessionId: cell.sessionId });
            void turn.answer.then(() => order.push("prompt"));
            void close.answer.then(() => order.push("close"));
            assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
            const closed = await within(close.answer, ANSWER_LIMIT_MS);
            assert.deepEqual(closed?.result, {}, JSON.stringify(closed));
            assert.deepEqual(order, early ? ["close", "prompt"] : ["prompt", "close"]);
            await until(() => (processesRunning(cell.marker, markerFile).length === 0 ? true : undefined), "the tool's processes gone", 30_000);
            await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the model request closed by the agent");
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + MARKER_DELAY_MS + 1000 - Date.now())));
            assert.equal(existsSync(markerFile), false, "the tool's delayed side effect never happened");
            assertClean(cell);
          } finally {
            await closeCell(cell);
          }
        });
      }

      cellIt(`${placement}: Stop after session/load in a new agent process is answered cancelled once and closes the model request (codex-acp #186, claude-agent-acp #415)`, async () => {
        // The first process is given time to exit on its own (gemini-cli saves its session late).
        const first = await openCell(agent, placement, { script: { kind: "finish", text: "remember me" }, bridgeArgs: ["--exit-grace-ms", "10000"] });
        assert.equal(stopReasonOf(await first.driver.prompt(first.sessionId, "hello")), "end_turn");
        first.driver.end();
        if ((await within(first.driver.exited, 10_000)) === undefined) first.driver.child.kill("SIGKILL");
        const started = await startCell(agent, placement, { script: { kind: "hold" }, reuse: first });
        const cell: RealCell = { ...started, sessionId: first.sessionId };
        try {
          const loaded = await started.driver.load(handshakeOf(started.recipe), first.sessionId, first.home);
          if (defect(agent, "cannot load its sessions") && "error" in loaded) {
            // The refusal must be that one, named; any other error fails the cell.
            assert.match(JSON.stringify(loaded), /No previous sessions found/);
            process.stdout.write(`      (${agent.label} refused session/load: no previous sessions found; the cancel after it is untested)\n`);
            return;
          }
          assert.ok(!("error" in loaded), `session/load: ${JSON.stringify(loaded).slice(0, 300)}`);
          const turn = cell.driver.startPrompt(cell.sessionId, "keep talking");
          await streaming(cell);
          cell.driver.cancel(cell.sessionId);
          await stoppedAndClosed(cell, turn.answer);
          assertClean(cell);
        } finally {
          await closeCell(cell);
        }
      });
    }
  });
}

/** The agent the bridge runs: the bridge's child whose command line is the agent's. */
function agentBehind(bridgePid: number, agent: RealAgent): number {
  const children = readFileSync(`/proc/${bridgePid}/task/${bridgePid}/children`, "utf8").trim().split(/\s+/).map(Number);
  const entry = agent.agent.args[0] ?? agent.agent.command;
  const found = children.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(entry));
  assert.equal(found.length, 1, `the bridge's children running ${entry}: ${found.join(", ")} (of ${children.join(", ")})`);
  return found[0] as number;
}

// A never-ending turn needs an agent that ignores every cancel; none of these does, so the cell
// freezes one (SIGSTOP) mid-turn. The bridge signs the new agent in again as the editor did (codex-acp's
// `authenticate`); these agents also take their keys from the environment, so that step is proven by
// test/bridge/stuck-turns.test.ts, with an agent that refuses `session/new` until it is signed in.
for (const agent of REAL_AGENTS) {
  describe(`interop, real agent: ${agent.label}, a turn that never ends`, function () {
    this.timeout(CELL_TIMEOUT_MS);
    cellIt("bridge, --on-stuck restart: the Stop is answered cancelled after the grace, the held prompt -32800 (restarted), and the new agent serves a new session with the model's text", async () => {
      const stuckArgs = ["--grace-ms", "500", "--turn-end-window-ms", "1500", "--on-stuck", "restart"];
      const cell = await openCell(agent, "bridge", { script: { kind: "hold" }, bridgeArgs: stuckArgs });
      try {
        const turn = cell.driver.startPrompt(cell.sessionId, "keep talking");
        await streaming(cell);
        const pid = cell.driver.child.pid;
        assert.ok(pid !== undefined);
        const frozen = agentBehind(pid, agent);
        // The whole tree: qwen-code serves ACP from a child of the process the bridge started.
        for (const member of [frozen, ...descendantsOf(frozen).map((entry) => entry.pid)]) {
          try {
            process.kill(member, "SIGSTOP");
          } catch {
            // ended meanwhile (qwen-code's own short `ps` calls)
          }
        }
        cell.driver.cancel(cell.sessionId);
        assert.equal(stopReasonOf(await within(turn.answer, ANSWER_LIMIT_MS)), "cancelled");
        const held = await within(cell.driver.prompt(cell.sessionId, "are you there"), 30_000);
        assert.match(JSON.stringify(held), /-32800.*restarted/, JSON.stringify(held));
        await until(() => (existsSync(`/proc/${frozen}`) ? undefined : true), "the frozen agent gone", 30_000);
        const wire = wireOf(cell.driver);
        assert.ok(wire !== undefined);
        const created = await wire.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
        const sessionId = (created.result as { sessionId: string }).sessionId;
        cell.model.script = { kind: "finish", text: "after the restart" };
        assert.equal(stopReasonOf(await cell.driver.prompt(sessionId, "hello again")), "end_turn");
        assert.ok(JSON.stringify(cell.driver.seen).includes("after the restart"));
        assert.deepEqual(cell.driver.problems(), []);
      } finally {
        await closeCell(cell);
      }
    });
  });
}
