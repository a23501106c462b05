import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bearerSigner, RapRuntime, type RapRuntimeEvent, runInProcessGroup } from "../../src/rap/index.js";
import { alive, bodyOf, listen, type Listening, pidsIn, until } from "./http-support.js";
import { startToolServer, type ToolServer } from "./tool-server.js";

describe("RAP tool server: a cancel stops a real process tree", () => {
  let pidDir: string;
  let tool: ToolServer;
  let callback: Listening;
  let runtime: RapRuntime;
  const events: RapRuntimeEvent[] = [];
  beforeEach(async () => {
    events.length = 0;
    pidDir = mkdtempSync(join(tmpdir(), "rap-test-pids-"));
    tool = await startToolServer("tok", pidDir);
    runtime = new RapRuntime({ servers: [tool.url], signer: bearerSigner("tok"), onEvent: (e) => events.push(e) });
    callback = await listen(async (request, response) => {
      runtime.deliver(JSON.parse(await bodyOf(request)));
      response.end();
    });
  });
  afterEach(async () => {
    await Promise.all([tool.close(), callback.close()]);
    rmSync(pidDir, { recursive: true, force: true });
  });

  it("the shell and its SIGTERM-ignoring grandchild are gone, and so is the temp dir", async () => {
    const call = runtime.invoke(`${tool.url}/invoke`, {
      threadId: "thread",
      toolCallId: "call-tree",
      operation: "run",
      arguments: { command: "tree" },
      callbackUrl: `${callback.url}/results`,
    });
    const pids = await until(() => (pidsIn(tool.pidFile("call-tree")).length === 2 ? pidsIn(tool.pidFile("call-tree")) : undefined), "the process tree");
    const tempDir = tool.tempDirs.get("call-tree");
    assert.ok(tempDir !== undefined && existsSync(join(tempDir, "scratch")));
    for (const pid of pids) assert.equal(alive(pid), true);

    assert.equal(runtime.cancel("thread", "call-tree"), "cancelled");
    assert.equal((await call.outcome).interrupted, true);
    const result = await tool.runs.get("call-tree");
    assert.equal(result?.stopped, true);

    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
    assert.equal(existsSync(tempDir), false, "the temp dir is gone");
    assert.deepEqual(tool.notices.map((n) => [n.status, n.effect]), [[200, "cancelled"]]);
    // The tool still sends a result after the cancel; the runtime accepts and ignores it.
    await until(() => events.some((e) => e.type === "late-result"), "the late result");
    await runtime.idle();
    assert.equal(tool.registry.size, 0);
    assert.equal(runtime.size, 0);
  });

  it("a call that finishes on its own delivers its result, and its temp dir is removed too", async () => {
    const call = runtime.invoke(`${tool.url}/invoke`, {
      threadId: "thread",
      toolCallId: "call-quick",
      operation: "run",
      arguments: { command: "quick" },
      callbackUrl: `${callback.url}/results`,
    });
    const outcome = await call.outcome;
    assert.deepEqual([outcome.interrupted, outcome.result.text], [false, "done"]);
    const tempDir = tool.tempDirs.get("call-quick");
    assert.ok(tempDir !== undefined);
    assert.equal(existsSync(tempDir), false);
    assert.equal(tool.registry.size, 0);
  });

  it("runInProcessGroup does not start at all when the call is already cancelled", async () => {
    let spawned = false;
    const result = await runInProcessGroup("sh", ["-c", "sleep 5"], { signal: AbortSignal.abort(), onSpawn: () => (spawned = true) });
    assert.deepEqual([result.stopped, spawned], [true, false]);
  });

  it("an abort at any moment while it starts stops the command or keeps it from starting (issue 35.4)", async () => {
    const moments: [string, () => Promise<unknown>][] = [
      ["at once (while its temp dir is made)", async () => undefined],
      ["a turn later", () => new Promise((resolve) => setImmediate(resolve))],
      ["1 ms later", () => new Promise((resolve) => setTimeout(resolve, 1))],
      ["10 ms later", () => new Promise((resolve) => setTimeout(resolve, 10))],
    ];
    for (const [when, wait] of moments) {
      const controller = new AbortController();
      const run = runInProcessGroup("sleep", ["30"], { signal: controller.signal, graceMs: 200 });
      await wait();
      controller.abort();
      const result = await run;
      assert.equal(result.stopped, true, `aborted ${when}: stopped`);
      assert.equal(result.code, null, `aborted ${when}: sleep did not run to its end`);
    }
  });

  /** Starts `script` under runInProcessGroup; resolves once the script wrote its grandchild's pid. */
  async function runScript(script: string, signal?: AbortSignal) {
    const pidFile = join(pidDir, "grandchild.pid");
    const run = runInProcessGroup("sh", ["-c", script], { signal: signal ?? new AbortController().signal, graceMs: 200, env: { PIDFILE: pidFile } });
    const grandchild = await until(() => pidsIn(pidFile)[0], "the grandchild's pid");
    return { run, grandchild };
  }

  /** Its session id (field 6 of /proc/PID/stat). */
  const sessionOf = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  };

  it("a cancel stops a grandchild that left the group with setsid and ignores SIGTERM (issue 25.14)", async () => {
    const abort = new AbortController();
    const { run, grandchild } = await runScript(
      "setsid sh -c 'trap \"\" TERM; exec sleep 300' & echo $! > \"$PIDFILE.tmp\"; mv \"$PIDFILE.tmp\" \"$PIDFILE\"; wait",
      abort.signal,
    );
    try {
      await until(() => (alive(grandchild) && sessionOf(grandchild) === grandchild ? true : undefined), "the grandchild in a session of its own");
      abort.abort();
      const result = await run;
      assert.equal(result.stopped, true);
      assert.equal(alive(grandchild), false, `the setsid grandchild ${grandchild} is gone when the run settles`);
    } finally {
      if (alive(grandchild)) process.kill(grandchild, "SIGKILL");
    }
  });

  it("a run that ends on its own leaves no setsid orphan behind (found by the run's environment marker)", async () => {
    const { run, grandchild } = await runScript(
      "setsid sleep 300 & echo $! > \"$PIDFILE.tmp\"; mv \"$PIDFILE.tmp\" \"$PIDFILE\"",
    );
    try {
      const result = await run;
      assert.deepEqual([result.stopped, result.code], [false, 0]);
      assert.equal(alive(grandchild), false, `the orphaned grandchild ${grandchild} is gone when the run settles`);
    } finally {
      if (alive(grandchild)) process.kill(grandchild, "SIGKILL");
    }
  });
});
