/**
 * `acp-cancel check` as a user runs it, against real SDK 2.4.0 agents whose verdicts are known
 * (test/fixtures/check-agent.ts): one that honours both cancels, one that ignores
 * `$/cancel_request`, one that never ends its turn, one that crashes when told to stop, one that
 * leaves its tool running; and the bad input (no command, a command not found, an agent that
 * exits at once or prints junk). Each asserts the table, the JSON and the exit status. The same
 * verdicts hold for their ACP v2 twins (test/fixtures/check-agent-v2.ts) under `--protocol v2`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Cell, Scorecard } from "../../src/check/scorecard.js";
import { readProcess } from "../../src/os/index.js";
import { ConformanceTracker } from "../support/schema-validator.js";
import { CLI } from "../support/bridge-harness.js";
import { fixturePath } from "../support/spawn-peer.js";

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI to its end (stdin closed). */
function cli(args: string[]): Promise<Ran> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
}

/** Faster limits for agents known to answer at once; the bridge's grace shortened to match. */
const FAST = ["--stop-limit-ms", "2500", "--bridge-arg=--grace-ms=500", "--quiet"];
const agent = (...args: string[]) => ["--", process.execPath, fixturePath("check-agent"), ...args];

describe("acp-cancel check against SDK agents whose Stop behaviour is known", function () {
  this.timeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-check-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let jsons = 0;

  /** Runs a check with --json; the run and the scorecard it wrote. */
  type Checked = { ran: Ran; card: Scorecard; cell: (scenario: string, placement: string) => Cell };
  async function check(args: string[]): Promise<Checked> {
    const json = join(dir, `card-${++jsons}.json`);
    const ran = await cli(["check", "--json", json, ...args]);
    assert.ok(ran.status === 0 || ran.status === 1, `exit ${String(ran.status)}: ${ran.stderr}`);
    const card = JSON.parse(readFileSync(json, "utf8")) as Scorecard;
    const cell = (scenario: string, placement: string) => {
      const found = card.cells.find((c) => c.scenario === scenario && c.placement === placement);
      assert.ok(found !== undefined, `no cell ${scenario}, ${placement}`);
      return found;
    };
    return { ran, card, cell };
  }

  it("an agent that honours both cancels: every cell holds in both placements, exit 0", async () => {
    const { ran, card, cell } = await check([...FAST, ...agent("--mode", "honour")]);
    assert.equal(ran.status, 0, ran.stdout);
    assert.equal(card.agent.name, "check-agent-honour");
    assert.equal(card.cells.length, 10);
    for (const c of card.cells) assert.equal(c.verdict, "pass", `${c.scenario}, ${c.placement}: ${c.note}`);
    assert.equal(cell("session/cancel", "direct").outcome, "cancelled");
    assert.equal(cell("SIGTERM mid-turn", "direct").outcome, "signal SIGTERM");
    assert.deepEqual(card.leftOut.map((l) => l.scenario), [
      "session/cancel while a tool runs",
      "session/cancel with a dialog open",
      "next prompt after a cancel",
    ]);
    assert.match(ran.stdout, /^every cell that ran holds \(10\)$/m);
  });

  it("an agent that ignores $/cancel_request: ✘ directly (no answer), ✔ through the bridge, exit 1", async () => {
    const { ran, cell } = await check([...FAST, "--only", "$/cancel_request", ...agent("--mode", "session-cancel-only")]);
    assert.equal(ran.status, 1);
    assert.deepEqual([cell("$/cancel_request", "direct").verdict, cell("$/cancel_request", "direct").outcome], ["fail", "none"]);
    assert.equal(cell("$/cancel_request", "bridge").verdict, "pass");
    assert.match(ran.stdout, /^\$\/cancel_request +✘ none: no answer within 2500 ms +✔ \d+ ms +fixes it/m);
  });

  it("an agent that never ends its turn: ✘ directly; through the bridge answered after its grace", async () => {
    const { ran, cell } = await check([...FAST, "--only", "session/cancel", ...agent("--mode", "never-ends")]);
    assert.equal(ran.status, 1);
    assert.equal(cell("session/cancel", "direct").verdict, "fail");
    const bridged = cell("session/cancel", "bridge");
    assert.deepEqual([bridged.verdict, bridged.outcome], ["pass", "cancelled"]);
    assert.ok((bridged.stopToAnswerMs ?? 0) >= 500, `answered after the 500 ms grace: ${bridged.stopToAnswerMs}`);
  });

  it("an agent that crashes when told to stop: ✘ in both; the bridge answers for it, naming the error", async () => {
    const { ran, cell } = await check([...FAST, "--only", "session/cancel", ...agent("--mode", "crash")]);
    assert.equal(ran.status, 1);
    assert.equal(cell("session/cancel", "direct").note, "no answer; the agent ended (exit 3)");
    assert.deepEqual([cell("session/cancel", "bridge").verdict, cell("session/cancel", "bridge").outcome], ["fail", "error -32603"]);
  });

  it("an agent that leaves its tool running: named as left running directly, stopped by the bridge, none left after", async () => {
    const { ran, cell } = await check([...FAST, "--only", "session/cancel", ...agent("--mode", "honour", "--spawn-tool")]);
    assert.equal(ran.status, 1);
    const direct = cell("session/cancel", "direct");
    assert.equal(direct.verdict, "fail");
    assert.equal(direct.leftRunning.length, 1);
    assert.match(direct.leftRunning[0]?.command ?? "", /^sleep 300$/);
    assert.equal(cell("session/cancel", "bridge").verdict, "pass");
    assert.match(ran.stdout, /^ {2}session\/cancel, direct: \d+ sleep 300$/m);
    // The check stops what each run left once the cell is judged.
    assert.equal(readProcess(direct.leftRunning[0]?.pid ?? 0), undefined);
  });

  describe("ACP v2 (--protocol v2): SDK 2.4.0 agents on the v2 draft API (test/fixtures/check-agent-v2.ts)", () => {
    const agentV2 = (...args: string[]) => ["--protocol", "v2", "--", process.execPath, fixturePath("check-agent-v2"), ...args];

    it("an agent that honours both cancels: every cell holds; every message check sends is valid v2", async function () {
      this.timeout(180_000); // ten cells, each a tapped agent started twice over
      // A passive tap in front of the agent records each run's wire (the bridge's side, for bridge cells).
      const log = join(dir, "v2-wire.jsonl");
      const tapped = ["--protocol", "v2", "--", process.execPath, fixturePath("wire-tap"), log, "--", process.execPath, fixturePath("check-agent-v2")];
      const { ran, card, cell } = await check([...FAST, ...tapped]);
      assert.equal(ran.status, 0, ran.stdout);
      assert.deepEqual([card.agent.name, card.agent.protocolVersion], ["check-agent-v2-honour", 2]);
      assert.equal(card.cells.length, 10);
      for (const c of card.cells) assert.equal(c.verdict, "pass", `${c.scenario}, ${c.placement}: ${c.note}`);
      // Stop ends the turn with an idle state_update; a queued prompt is withdrawn by $/cancel_request.
      assert.equal(cell("session/cancel", "direct").outcome, "cancelled");
      assert.equal(cell("$/cancel_request", "direct").outcome, "error -32800");
      const wire = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { dir: string; line: string });
      const conformance = new ConformanceTracker("check's v2 wire");
      for (const { dir: to, line } of wire) conformance.see(to === "to-agent" ? "a" : "b", JSON.parse(line), to === "to-agent");
      assert.equal(conformance.firstProblem, undefined);
      const sent = wire.filter((entry) => entry.dir === "to-agent").map((entry) => (JSON.parse(entry.line) as { method?: string }).method);
      for (const method of ["initialize", "session/new", "session/prompt", "session/cancel", "$/cancel_request"]) assert.ok(sent.includes(method), method);
    });

    it("an agent that ignores $/cancel_request: the queued prompt is not withdrawn directly; the bridge withdraws it", async () => {
      const { ran, cell } = await check([...FAST, "--only", "$/cancel_request", ...agentV2("--mode", "session-cancel-only")]);
      assert.equal(ran.status, 1);
      assert.deepEqual([cell("$/cancel_request", "direct").verdict, cell("$/cancel_request", "direct").outcome], ["fail", "none"]);
      assert.deepEqual([cell("$/cancel_request", "bridge").verdict, cell("$/cancel_request", "bridge").outcome], ["pass", "error -32800"]);
    });

    it("an agent that never ends its turn: ✘ directly; through the bridge the idle state_update comes after its grace", async () => {
      const { ran, cell } = await check([...FAST, "--only", "session/cancel", ...agentV2("--mode", "never-ends")]);
      assert.equal(ran.status, 1);
      assert.equal(cell("session/cancel", "direct").verdict, "fail");
      const bridged = cell("session/cancel", "bridge");
      assert.deepEqual([bridged.verdict, bridged.outcome], ["pass", "cancelled"]);
      assert.ok((bridged.stopToAnswerMs ?? 0) >= 500, `answered after the 500 ms grace: ${bridged.stopToAnswerMs}`);
    });

    it("an agent that crashes when told to stop: ✘ in both placements", async () => {
      const { ran, cell } = await check([...FAST, "--only", "session/cancel", ...agentV2("--mode", "crash")]);
      assert.equal(ran.status, 1);
      assert.equal(cell("session/cancel", "direct").note, "no answer; the agent ended (exit 3)");
      assert.equal(cell("session/cancel", "bridge").verdict, "fail");
    });
  });

  describe("bad input: one clear line and a documented exit status", () => {
    const assertClear = (ran: Ran, status: number, what: RegExp) => {
      assert.equal(ran.status, status, ran.stderr);
      assert.match(ran.stderr, what);
      assert.doesNotMatch(ran.stderr, /\n\s+at /, `no stack trace:\n${ran.stderr}`);
      assert.equal(ran.stdout, "");
    };

    it("no agent command: 2", async () => {
      assertClear(await cli(["check"]), 2, /^acp-cancel: check needs the agent's command after '--'/);
      assertClear(await cli(["check", "--"]), 2, /check needs the agent's command/);
      assertClear(await cli(["check", "my-agent"]), 2, /the agent command goes after '--'/);
    });

    it("an unknown scenario, or --model-server for an agent it has no recipe for: 2", async () => {
      assertClear(await cli(["check", "--only", "nope", "--", "x"]), 2, /--only: no scenario 'nope' \(one of: session\/cancel,/);
      assertClear(await cli(["check", "--protocol", "3", "--", "x"]), 2, /--protocol is v1 or v2, got '3'/);
      const unknown = await cli(["check", "--model-server", "--", "my-agent"]);
      assertClear(unknown, 2, /--model-server has recipes for .*'my-agent' is none of them/);
    });

    it("a command that is not there: 127; a --json that cannot be written: 73", async () => {
      assertClear(await cli(["check", "--", join(dir, "no-such-agent")]), 127, /agent command not found: .*no-such-agent/);
      assertClear(await cli(["check", "--json", dir, "--", "x"]), 73, /--json: cannot write '.*': is a directory/);
    });

    it("an agent that exits at once: 69, with its exit and its stderr", async () => {
      const ran = await cli(["check", "--", "sh", "-c", "echo 'fatal: no config' >&2; exit 4"]);
      const said = /^acp-cancel: the agent ended \(exit 4\) before answering initialize; its stderr ends: fatal: no config$/m;
      assertClear(ran, 69, said);
    });

    it("an agent that prints junk and never answers: 69, quoting the junk", async () => {
      const ran = await cli(["check", "--start-limit-ms", "1000", "--", "sh", "-c", "echo 'Welcome to my agent!'; exec sleep 30"]);
      const said = new RegExp(
        "did not answer initialize within 1000 ms; it wrote 1 line\\(s\\) on stdout that are not JSON-RPC, the first: 'Welcome to my agent!'",
      );
      assertClear(ran, 69, said);
    });
  });
});
