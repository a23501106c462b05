/**
 * claude-agent-acp 0.101.0 speaking the ACP v2 draft (CLAUDE_AGENT_ACP_PROTOCOL=v2), directly and
 * through `acp-cancel bridge`: a prompt's answer acknowledges its insertion, and the turn ends with
 * an idle `state_update`. Stop mid-stream, and the editor's prompt + `session/cancel` sent together
 * (issue 33: the agent answers -32800, no turn ran, and the next prompt must go straight through).
 */
import assert from "node:assert/strict";
import { closeCell } from "./drivers.js";
import { idles, until, type WireClient, within } from "./harness.js";
import { CLAUDE_V2, PEERS_INSTALLED, PEERS_NOTE, RUN_SLOW, SLOW_NOTE } from "./peers.js";
import { agentSide, startCell } from "./real-cells.js";
import { failsDirectly } from "./verdicts.js";

const cellIt = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);

interface V2Cell {
  wire: WireClient;
  sessionId: string;
  parts: Awaited<ReturnType<typeof startCell>>;
}

async function openV2(placement: "direct" | "bridge"): Promise<V2Cell> {
  const parts = await startCell(CLAUDE_V2, placement, { script: { kind: "hold" } });
  const wire = (parts.driver as { wire?: WireClient }).wire;
  assert.ok(wire !== undefined);
  await wire.request("initialize", { protocolVersion: 2, info: { name: "interop-editor", version: "1.0.0" }, capabilities: {} }).answer;
  const created = await wire.request("session/new", { cwd: parts.home }).answer;
  const sessionId = (created.result as { sessionId: string }).sessionId;
  for (const { method, params } of parts.recipe.sessionSetup(sessionId)) await wire.request(method, params).answer;
  return { wire, sessionId, parts };
}

const prompt = (cell: V2Cell, text: string) => cell.wire.request("session/prompt", { sessionId: cell.sessionId, prompt: [{ type: "text", text }] });

for (const placement of ["direct", "bridge"] as const) {
  describe(`interop, real agent: ${CLAUDE_V2.label}, ${placement}`, function () {
    this.timeout(180_000);

    cellIt(`${placement}: Stop by session/cancel mid-stream ends the work with one idle state_update (cancelled), closes the model request, and the next prompt shows the model's text`, async () => {
      const cell = await openV2(placement);
      try {
        const first = prompt(cell, "keep talking");
        assert.ok("result" in (await first.answer), "the prompt was inserted");
        await until(() => (cell.parts.model.streaming.length > 0 && JSON.stringify(cell.wire.log).includes("working") ? true : undefined), "the model streaming", 60_000);
        cell.wire.notify("session/cancel", { sessionId: cell.sessionId });
        await until(() => (idles(cell.wire).length > 0 ? true : undefined), "the idle state_update");
        assert.deepEqual(idles(cell.wire), ["cancelled"]);
        await until(() => (cell.parts.model.streaming.length === 0 ? true : undefined), "the model request closed by the agent");
        cell.parts.model.script = { kind: "finish", text: "the next turn's words" };
        assert.ok("result" in (await prompt(cell, "again").answer));
        await until(() => (idles(cell.wire).length > 1 ? true : undefined), "the next turn's end", 60_000);
        assert.deepEqual(idles(cell.wire), ["cancelled", "end_turn"]);
        assert.ok(JSON.stringify(cell.wire.log).includes("the next turn's words"));
        assert.deepEqual(cell.wire.unansweredOrRepeated(), []);
      } finally {
        await closeCell({ driver: cell.parts.driver, model: cell.parts.model, marker: cell.parts.marker, home: cell.parts.home });
      }
    });

    // check's v2 `$/cancel_request` cell: a prompt queued behind the running turn, cancelled by id.
    const keeps = placement === "direct" && failsDirectly(CLAUDE_V2.recipe, "$/cancel_request");
    cellIt(`${placement}: $/cancel_request for a prompt queued behind a running turn ${keeps ? "is not answered: the agent does not withdraw it (its defect)" : "withdraws it: answered -32800 once"}`, async () => {
      const cell = await openV2(placement);
      try {
        assert.ok("result" in (await prompt(cell, "keep talking").answer), "the first prompt was inserted");
        await until(() => (cell.parts.model.streaming.length > 0 ? true : undefined), "the model streaming", 60_000);
        const queued = prompt(cell, "and then this");
        cell.wire.notify("$/cancel_request", { requestId: queued.id });
        if (keeps) {
          // A later request answered while the queued prompt is not (by order, not by time).
          await cell.wire.request("session/new", { cwd: cell.parts.home }).answer;
          assert.equal(await within(queued.answer, 2000), undefined, "no answer to the cancelled queued prompt");
        } else {
          const answer = await within(queued.answer, 15_000);
          assert.equal((answer?.error as { code?: unknown } | undefined)?.code, -32800, JSON.stringify(answer));
        }
        cell.wire.notify("session/cancel", { sessionId: cell.sessionId });
        await until(() => (idles(cell.wire).length > 0 ? true : undefined), "the running turn's end");
        if (!keeps) assert.deepEqual(cell.wire.unansweredOrRepeated(), []);
      } finally {
        await closeCell({ driver: cell.parts.driver, model: cell.parts.model, marker: cell.parts.marker, home: cell.parts.home });
      }
    });

    cellIt(`${placement}: a prompt and session/cancel sent together: the prompt is not inserted (-32800), nothing is made up, and the next prompt goes straight through and shows the model's text`, async () => {
      const cell = await openV2(placement);
      try {
        const early = prompt(cell, "never mind");
        cell.wire.notify("session/cancel", { sessionId: cell.sessionId });
        const answer = await within(early.answer, 15_000);
        assert.ok(answer !== undefined, "the early prompt answered");
        const inserted = "result" in answer;
        process.stdout.write(`      (the early prompt: ${JSON.stringify(answer).slice(0, 120)})\n`);
        cell.parts.model.script = { kind: "finish", text: "the next turn's words" };
        const sentAt = Date.now();
        const next = await within(prompt(cell, "again").answer, 8000);
        assert.ok(next !== undefined && "result" in next, `the next prompt inserted at once: ${JSON.stringify(next)}`);
        await until(() => (JSON.stringify(cell.wire.log).includes("the next turn's words") ? true : undefined), "the next turn's text", 60_000);
        await until(() => (idles(cell.wire).at(-1) === "end_turn" ? true : undefined), "the next turn's end", 60_000);
        process.stdout.write(`      (the next prompt's text ${Date.now() - sentAt} ms after it was sent)\n`);
        // No turn ran for a prompt that was never inserted: no idle state_update made up for it.
        if (!inserted) assert.deepEqual(idles(cell.wire), ["end_turn"]);
        if (placement === "bridge") {
          const toAgent = agentSide(cell.wire, "bridge->agent").filter((m) => m.method === "session/prompt");
          assert.equal(toAgent.length, 2, "both prompts reached the agent");
        }
        assert.deepEqual(cell.wire.unansweredOrRepeated(), []);
      } finally {
        await closeCell({ driver: cell.parts.driver, model: cell.parts.model, marker: cell.parts.marker, home: cell.parts.home });
      }
    });
  });
}
