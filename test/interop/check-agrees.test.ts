/**
 * `acp-cancel check --model-server --json`, the built CLI run as docs/interop.md's matrix runs it
 * (scripts/interop-matrix.ts), gives on each of today's agents, cell by cell, the verdicts the
 * interop suite asserts (verdicts.ts). A cell check cannot run ("–") fails here unless verdicts.ts
 * says why it cannot run for that agent.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { repositoryRoot } from "../../scripts/count-exports.js";
import { checkRun, PEERS, type Peer } from "../../scripts/interop-matrix.js";
import { AGENT_NAMES, type AgentName } from "../../src/check/index.js";
import { SCENARIO_NAMES } from "../../src/check/run-check.js";
import type { Scorecard } from "../../src/check/scorecard.js";
import { CLI } from "../support/bridge-harness.js";
import { PEERS_INSTALLED, PEERS_NOTE, RUN_SLOW } from "./peers.js";
import { CHECK_CELLS, disagreements } from "./verdicts.js";

/**
 * Checks run at once. Each starts its agent afresh for each of its 16 cells: two at once took
 * 24 min for the six, whose own times add up to 43 min (2 cores shared, load 20-30), and agreed.
 */
const AT_ONCE = 2;
/** Only catches a hang: a check waits its turn behind the others, then runs for minutes. */
const CHECK_TIMEOUT_MS = 60 * 60_000;

/**
 * Six checks take 9 min (2 at once, beside other work) to 24 (load 20-30): a script of their own,
 * `npm run test:check-agrees`, which .ci/run runs after the slow suites.
 */
const RUN_AGREES = RUN_SLOW && process.env.ACP_CANCEL_CHECK_AGREES === "1";
const AGREES_NOTE = " [slow, 9-25 min: npm run test:check-agrees]";
const cellIt = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_AGREES ? it : (title: string, fn: () => Promise<void>) => it.skip(title + AGREES_NOTE, fn);

interface CheckResult {
  readonly status: number | null;
  readonly stderr: string;
  readonly card?: Scorecard;
  readonly seconds: number;
}

const root = repositoryRoot();
const running = new Set<ChildProcess>();

/** Runs check on `peer`; never rejects (a test awaits it later). */
function check(peer: Peer): Promise<CheckResult> {
  const dir = mkdtempSync(join(tmpdir(), "acp-check-agrees-"));
  const json = join(dir, `${peer.file}.json`);
  const { args, env } = checkRun(root, CLI, peer, json);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
    running.add(child);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (status) => {
      running.delete(child);
      let card: Scorecard | undefined;
      try {
        card = JSON.parse(readFileSync(json, "utf8")) as Scorecard;
      } catch {
        // none written: the status and stderr say why
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({ status, stderr, seconds: (performance.now() - started) / 1000, ...(card === undefined ? {} : { card }) });
    });
  });
}

/** Runs the jobs `slots` at a time, in order. */
function queue(slots: number): <T>(job: () => Promise<T>) => Promise<T> {
  const waiting: (() => void)[] = [];
  let free = slots;
  return async (job) => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await job();
    } finally {
      const next = waiting.shift();
      if (next === undefined) free++;
      else next();
    }
  };
}

describe("interop: acp-cancel check gives the verdicts the suite asserts, on each real agent", function () {
  this.timeout(CHECK_TIMEOUT_MS);
  const results = new Map<string, Promise<CheckResult>>();
  const startedAt = performance.now();

  before(function () {
    if (!PEERS_INSTALLED || !RUN_AGREES) return;
    const inTurn = queue(AT_ONCE);
    for (const peer of PEERS) results.set(peer.file, inTurn(() => check(peer)));
  });

  after(async () => {
    for (const child of running) child.kill("SIGTERM");
    await Promise.all(results.values());
    if (results.size > 0) process.stdout.write(`      (${results.size} checks, ${AT_ONCE} at once: ${Math.round((performance.now() - startedAt) / 1000)} s)\n`);
  });

  it("verdicts.ts has a row for each of check's scenarios and a column for each matrix peer", () => {
    assert.deepEqual([...CHECK_CELLS], SCENARIO_NAMES);
    for (const peer of PEERS) assert.ok(AGENT_NAMES.includes(peer.file as AgentName), `${peer.file} is an agent with a recipe`);
  });

  for (const peer of PEERS) {
    cellIt(`${peer.file}: check --model-server${peer.checkArgs === undefined ? "" : ` ${peer.checkArgs.join(" ")}`} gives each cell the suite's verdict`, async () => {
      const result = await (results.get(peer.file) as Promise<CheckResult>);
      process.stdout.write(`      (${peer.file}: check took ${Math.round(result.seconds)} s, exit ${String(result.status)})\n`);
      // 0: every cell holds; 1: some cell is ✘. Anything else: check could not drive the agent.
      assert.ok(result.card !== undefined && (result.status === 0 || result.status === 1), `check exited ${String(result.status)}: ${result.stderr.slice(-1500)}`);
      assert.deepEqual(disagreements(peer.file as AgentName, result.card), [], result.stderr.slice(-3000));
    });
  }
});
