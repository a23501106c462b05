/**
 * `acp-cancel check` in process: the verdict rules (what counts as stopped), what the bridge
 * changes, and the table, markdown and JSON renderings. test/check/check-command.test.ts (npm run
 * test:process) runs the real command against SDK agents whose verdicts are known.
 */
import assert from "node:assert/strict";
import { renderMarkdown, renderTable } from "../../src/check/render.js";
import { allHold, bridgeChange, type Cell, type Scorecard } from "../../src/check/scorecard.js";
import { judge, type Observation, outcomeOf } from "../../src/check/verdict.js";

const stop = (overrides: Partial<Observation> = {}): Observation => ({
  scenario: "session/cancel",
  placement: "direct",
  judge: "answer",
  accepted: ["cancelled"],
  limitMs: 5000,
  answers: [{ atMs: 12.4, outcome: "cancelled" }],
  leftRunning: [],
  ...overrides,
});

function card(cells: Cell[], overrides: Partial<Scorecard> = {}): Scorecard {
  return {
    tool: "acp-cancel check",
    version: "0.1.0",
    agent: { command: ["my-agent", "--acp"], name: "my-agent", agentVersion: "1.2.3", protocolVersion: 1 },
    modelServer: false,
    leftOut: [{ scenario: "session/cancel while a tool runs", reason: "needs --model-server" }],
    cells,
    ...overrides,
  };
}

describe("acp-cancel check, in process: verdicts and renderings", () => {
  describe("a Stop answered", () => {
    it("holds when answered once, cancelled, with nothing the turn started left running", () => {
      const cell = judge(stop());
      assert.equal(cell.verdict, "pass");
      assert.equal(cell.stopToAnswerMs, 12.4);
      assert.equal(cell.note, "");
    });

    it("fails with no answer, naming the limit, or the agent's exit when it ended", () => {
      assert.deepEqual(
        [judge(stop({ answers: [] })).note, judge(stop({ answers: [], exit: { atMs: 3, outcome: "exit 3" } })).note],
        ["no answer within 5000 ms", "no answer; the agent ended (exit 3)"],
      );
      assert.equal(judge(stop({ answers: [] })).verdict, "fail");
    });

    it("fails when answered twice, or with an outcome that is not a stop", () => {
      const twice = judge(stop({ answers: [{ atMs: 1, outcome: "cancelled" }, { atMs: 9, outcome: "end_turn" }] }));
      assert.equal(twice.verdict, "fail");
      assert.match(twice.note, /answered 2 times \(cancelled, end_turn\)/);
      const endTurn = judge(stop({ answers: [{ atMs: 1, outcome: "end_turn" }] }));
      assert.deepEqual([endTurn.verdict, endTurn.outcome, endTurn.note], ["fail", "end_turn", "not cancelled"]);
      const byId = judge(stop({ accepted: ["cancelled", "error -32800"], answers: [{ atMs: 1, outcome: "error -32800" }] }));
      assert.equal(byId.verdict, "pass");
    });

    it("fails when the turn's work goes on: a process left running, the model request open, a side effect", () => {
      const left = judge(stop({ leftRunning: [{ pid: 42, command: "sleep 300" }] }));
      assert.deepEqual([left.verdict, left.note], ["fail", "left 1 process running"]);
      const undone = judge(stop({ undone: ["the model request is still open", "the tool's side effect happened after Stop"] }));
      assert.equal(undone.verdict, "fail");
      assert.equal(undone.note, "the model request is still open; the tool's side effect happened after Stop");
    });

    it("is not judged when the turn ended before Stop, but a prompt that failed is a failure", () => {
      const ended = judge(stop({ endedBeforeStop: "end_turn", answers: [] }));
      assert.equal(ended.verdict, "skip");
      assert.match(ended.note, /longer --prompt/);
      assert.equal(judge(stop({ endedBeforeStop: "error -32603", answers: [] })).verdict, "fail");
    });
  });

  describe("a Stop by ending the process (stdin closed, SIGTERM)", () => {
    const exit = (overrides: Partial<Observation>) => judge(stop({ judge: "exit", accepted: [], answers: [], ...overrides }));

    it("holds when the process exited in time and nothing of the run is left", () => {
      const cell = exit({ exit: { atMs: 80, outcome: "signal SIGTERM" } });
      assert.deepEqual([cell.verdict, cell.stopToAnswerMs, cell.outcome], ["pass", 80, "signal SIGTERM"]);
    });

    it("fails when it stays, or leaves processes behind", () => {
      assert.deepEqual([exit({}).verdict, exit({}).note], ["fail", "still running 5000 ms after Stop"]);
      const orphan = exit({ exit: { atMs: 5, outcome: "exit 0" }, leftRunning: [{ pid: 7, command: "node tool.js" }] });
      assert.deepEqual([orphan.verdict, orphan.note], ["fail", "left 1 process running"]);
    });
  });

  it("names a prompt's outcome in a word", () => {
    assert.deepEqual(
      [
        outcomeOf({ result: { stopReason: "cancelled" } }),
        outcomeOf({ error: { code: -32800, message: "x" } }),
        outcomeOf({ result: {} }),
      ],
      ["cancelled", "error -32800", "answer without stopReason"],
    );
  });

  describe("what the bridge changes", () => {
    const direct = judge(stop({ answers: [] }));
    const bridge = judge(stop({ placement: "bridge", answers: [{ atMs: 2010, outcome: "cancelled" }] }));

    it("names a fix, a regression, a gain in processes stopped, or the time it adds", () => {
      assert.match(bridgeChange(direct, bridge), /^fixes it \(directly: no answer within 5000 ms\)$/);
      assert.match(bridgeChange(bridge, direct), /^REGRESSION: no answer/);
      const leaving = judge(stop({ answers: [{ atMs: 10, outcome: "cancelled" }], leftRunning: [] }));
      assert.equal(bridgeChange(judge(stop({ answers: [{ atMs: 4, outcome: "cancelled" }] })), leaving), "+6 ms");
      const crash = judge(stop({ answers: [], exit: { atMs: 1, outcome: "exit 3" } }));
      const answeredForIt = judge(stop({ placement: "bridge", answers: [{ atMs: 20, outcome: "error -32603" }] }));
      assert.equal(bridgeChange(crash, answeredForIt), "answers it (error -32603), still fails");
    });
  });

  describe("renderings", () => {
    const cells: Cell[] = [
      judge(stop()),
      judge(stop({ placement: "bridge", answers: [{ atMs: 14, outcome: "cancelled" }] })),
      judge(stop({ scenario: "$/cancel_request", answers: [], leftRunning: [{ pid: 99, command: "sleep 300" }] })),
      judge(stop({ scenario: "$/cancel_request", placement: "bridge", answers: [{ atMs: 3, outcome: "cancelled" }] })),
    ];

    it("prints one row per scenario with both placements and what the bridge changes, then what was left", () => {
      const table = renderTable(card(cells));
      const lines = table.split("\n");
      assert.equal(lines[0], "acp-cancel check: my-agent 1.2.3 (ACP v1)");
      assert.match(table, /^session\/cancel +✔ 12 ms +✔ 14 ms +\+2 ms$/m);
      assert.match(table, /^\$\/cancel_request +✘ none: no answer within 5000 ms; left 1 process running +✔ 3 ms +fixes it/m);
      assert.match(table, /^ {2}\$\/cancel_request, direct: 99 sleep 300$/m);
      assert.match(table, /^ {2}session\/cancel while a tool runs: needs --model-server$/m);
      assert.match(table, /^1 of 4 cells fail$/m);
      assert.equal(allHold(card(cells)), false);
      assert.equal(allHold(card(cells.filter((cell) => cell.verdict === "pass"))), true);
    });

    it("escapes what the agent says about itself (a name with an ESC)", () => {
      const table = renderTable(card(cells, { agent: { command: ["x"], name: "evil\u001b[2J" } }));
      assert.ok(!table.includes("\u001b"));
      assert.match(table, /evil\\x1b\[2J/);
    });

    it("makes a markdown matrix of several scorecards, one column per agent", () => {
      const other = card([judge(stop({ placement: "bridge" }))], { agent: { command: ["b|c"] }, leftOut: [] });
      const markdown = renderMarkdown([card(cells), other]);
      const lines = markdown.split("\n");
      assert.equal(lines[0], "| scenario | my-agent 1.2.3 (ACP v1) | b\\|c |");
      assert.equal(lines[1], "| --- | --- | --- |");
      assert.equal(lines[2], "| session/cancel | D ✔ 12 ms · B ✔ 14 ms | B ✔ 12 ms |");
      assert.match(lines[3] ?? "", /^\| \$\/cancel_request \| D ✘ none: .* · B ✔ 3 ms \| not run \|$/);
      assert.match(markdown, /^- my-agent 1\.2\.3 \(ACP v1\): session\/cancel while a tool runs not run: needs --model-server$/m);
    });

    it("round-trips through JSON as the scorecard it is (what --json writes and the matrix script reads)", () => {
      const written = card(cells);
      assert.deepEqual(JSON.parse(JSON.stringify(written)), written);
    });
  });
});
