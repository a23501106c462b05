/**
 * Real agents doing real work, stopped: codex-acp and claude-agent-acp against a scripted model
 * on loopback (model-server.ts) that streams, holds a stream open, calls the agent's real shell
 * tool, or makes it ask permission. Each cell runs through `acp-cancel bridge` and with an
 * embedded `withCancellation` client. Findings: docs/interop.md ("Real work").
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type Driver, bridgeDriver, closeCell, embeddedDriver } from "./drivers.js";
import { type Message, processesWith, sealedEnv, until } from "./harness.js";
import { ModelServer, type Script } from "./model-server.js";
import { type AgentPeer, claude, codex, PEERS_INSTALLED, PEERS_NOTE, RUN_SLOW, SLOW_NOTE } from "./peers.js";

/** A codex model family whose shell tool is `exec_command`: the one that keeps an interrupted tool running. */
const CODEX_MODEL = process.env.INTEROP_CODEX_MODEL ?? "gpt-5.3-codex";
const BRIDGE_ARGS = ["--exit-grace-ms", "500", "--kill-grace-ms", "500"];
/** A command no one else on the machine runs, so the cell can find its process by its command line. */
const toolCommand = (marker: string) => `sleep 300 # ${marker.slice(0, 8)}`;

interface Cell {
  driver: Driver;
  model: ModelServer;
  marker: string;
  home: string;
  sessionId: string;
}

async function openCell(peer: AgentPeer, placement: "bridge" | "embedded", script: Script, approval = "never"): Promise<Cell> {
  const model = await new ModelServer().start();
  model.script = script;
  const { env, home, marker } = sealedEnv(model, { approvalPolicy: approval, model: CODEX_MODEL });
  const driver = placement === "bridge" ? bridgeDriver(peer.agent, env, home, BRIDGE_ARGS) : embeddedDriver(peer.agent, env, home);
  const sessionId = await driver.open(peer.auth, home);
  return { driver, model, marker, home, sessionId };
}

/** Live processes of the cell whose command line is the tool's. */
function toolProcesses(cell: Cell): number[] {
  return processesWith(cell.marker).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").includes("sleep 300");
    } catch {
      return false;
    }
  });
}

const stopReasonOf = (answer: Message | undefined) => (answer?.result as { stopReason?: unknown } | undefined)?.stopReason;

const cellIt = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);

for (const peer of [codex, claude]) {
  describe(`interop, real work: ${peer.name} with a scripted model`, function () {
    this.timeout(90_000);
    for (const placement of ["bridge", "embedded"] as const) {
      cellIt(`${placement}: a normal turn streams the model's text and ends end_turn`, async () => {
        const cell = await openCell(peer, placement, { kind: "finish", text: "hello from the scripted model" });
        try {
          const answer = await cell.driver.prompt(cell.sessionId, "say hello");
          assert.equal(stopReasonOf(answer), "end_turn", JSON.stringify(answer));
          assert.ok(JSON.stringify(cell.driver.seen).includes("hello from the scripted model"), "the model's text reached the editor");
          assert.deepEqual(cell.driver.problems(), []);
        } finally {
          await closeCell(cell);
        }
      });

      cellIt(`${placement}: Stop mid-stream ends the turn cancelled, the agent closes its upstream request (seen at the model), and the next turn works`, async () => {
        const cell = await openCell(peer, placement, { kind: "hold" });
        try {
          const turn = cell.driver.prompt(cell.sessionId, "keep talking");
          await until(() => (cell.model.streaming.length > 0 && cell.driver.seen.length > 0 ? true : undefined), "the model streaming");
          cell.driver.cancel(cell.sessionId);
          assert.equal(stopReasonOf(await turn), "cancelled");
          await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the upstream request closed by the agent");
          assert.ok(cell.model.turns.every((t) => t.closedByAgentAt !== undefined), "closed by the agent, not finished");
          // The session goes on after the bridge's cleanup of the cancelled turn's processes (0.5 s after
          // its answer): nothing the agent needs for its next turn was taken for the turn's.
          await new Promise((resolve) => setTimeout(resolve, 1500));
          cell.model.script = { kind: "finish", text: "second turn" };
          assert.equal(stopReasonOf(await cell.driver.prompt(cell.sessionId, "again")), "end_turn");
          // claude-agent-acp 0.23.1 answers the first prompt after a cancelled turn end_turn at once (zero
          // usage) and its text never arrives, with or without acp-cancel (docs/interop.md, ⁸).
          if (peer === codex) assert.ok(JSON.stringify(cell.driver.seen).includes("second turn"), "the next turn's text");
          assert.deepEqual(cell.driver.problems(), []);
        } finally {
          await closeCell(cell);
        }
      });

      if (placement === "bridge") {
        cellIt("bridge: Stop before the model's first byte ends the turn cancelled, and the agent closes its upstream request", async () => {
          const cell = await openCell(peer, placement, { kind: "slow", delayMs: 60_000 });
          try {
            const turn = cell.driver.prompt(cell.sessionId, "think first");
            await until(() => (cell.model.streaming.length > 0 ? true : undefined), "the model request open");
            cell.driver.cancel(cell.sessionId);
            assert.equal(stopReasonOf(await turn), "cancelled");
            await until(() => (cell.model.streaming.length === 0 ? true : undefined), "the upstream request closed by the agent");
            assert.deepEqual(cell.driver.problems(), []);
          } finally {
            await closeCell(cell);
          }
        });
      }

      cellIt(`${placement}: Stop while a shell tool runs ends the turn cancelled${placement === "bridge" ? "; the tool is gone" : ""}`, async () => {
        const cell = await openCell(peer, placement, { kind: "hold" });
        // The model is asked again while the tool runs (codex yields after 250 ms); it then holds.
        cell.model.script = { kind: "shell", command: toolCommand(cell.marker), text: "done", then: "hold" };
        // Permission asked (claude asks before Bash): allowed, so the tool really runs.
        cell.driver.onDialog = (dialog) => {
          const options = (dialog.params.options ?? []) as { optionId: string; kind: string }[];
          const allow = options.find((o) => o.kind === "allow_once") ?? options[0];
          if (allow !== undefined) dialog.answer({ outcome: "selected", optionId: allow.optionId });
        };
        try {
          const turn = cell.driver.prompt(cell.sessionId, "run the tool");
          const [tool] = await until(() => (toolProcesses(cell).length > 0 ? toolProcesses(cell) : undefined), "the tool running", 30_000);
          // codex hands the running tool's first output to the model and goes on: Stop comes then.
          // claude's Bash waits for its command: Stop comes while it waits.
          if (peer === codex) await until(() => (cell.model.turns.length >= 2 ? true : undefined), "the model asked again while the tool runs");
          cell.driver.cancel(cell.sessionId);
          assert.equal(stopReasonOf(await turn), "cancelled");
          const answeredAt = Date.now();
          if (placement === "bridge" || peer !== codex) {
            await until(() => (toolProcesses(cell).length === 0 ? true : undefined), "the tool gone", 30_000);
            process.stdout.write(`      (${cell.model.turns[0]?.toolCalled}: tool ${tool} gone ${Date.now() - answeredAt} ms after the cancelled answer)\n`);
          } else {
            // codex keeps an interrupted tool, and nothing stops it here: only the bridge does (docs/bridge.md).
            // Recorded, not asserted: whether it is still there now depends on codex, not on acp-cancel.
            process.stdout.write(`      (${cell.model.turns[0]?.toolCalled}: tool ${tool} still running after the answer: ${toolProcesses(cell).includes(tool ?? -1)})\n`);
          }
          assert.deepEqual(cell.driver.problems(), []);
        } finally {
          await closeCell(cell);
        }
      });

      cellIt(`${placement}: Stop with a permission dialog open: the dialog is answered cancelled, the turn ends cancelled`, async () => {
        // codex asks before a command it does not trust under approval_policy "untrusted"; claude asks before Bash.
        const cell = await openCell(peer, placement, { kind: "shell", command: "", text: "done" }, "untrusted");
        cell.model.script = { kind: "shell", command: toolCommand(cell.marker), text: "done" };
        const cancelRequests: Message[] = [];
        if (placement === "bridge") {
          const wire = (cell.driver as Driver & { wire: import("./harness.js").WireClient }).wire;
          const previous = wire.onIncoming;
          wire.onIncoming = (message) => {
            previous(message);
            if (message.method === "$/cancel_request") cancelRequests.push(message);
          };
        }
        try {
          const turn = cell.driver.prompt(cell.sessionId, "run the tool, asking first");
          const dialog = await until(() => cell.driver.dialogs[0], "the permission dialog", 30_000);
          cell.driver.cancel(cell.sessionId);
          if (placement === "bridge") {
            // acp-cancel tells the editor its dialog is cancelled; a polite editor then answers it.
            await until(() => cancelRequests[0], "$/cancel_request for the dialog");
            dialog.answer({ outcome: "cancelled" });
          }
          assert.equal(stopReasonOf(await turn), "cancelled");
          assert.deepEqual(toolProcesses(cell), [], "the tool never ran");
          assert.deepEqual(cell.driver.problems(), []);
        } finally {
          await closeCell(cell);
        }
      });
    }
  });
}
