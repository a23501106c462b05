import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { descendantsOf, readProcess, readProcesses, stillRunning, terminate, uptimeTicks } from "../../src/os/index.js";

/** Polls until `check` yields a value (the mocha timeout bounds it). */
const until = async <T>(check: () => T | undefined): Promise<T> => {
  for (let value = check(); ; value = check()) {
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe("os: the /proc process table", () => {
  const started: ChildProcess[] = [];
  /** The setsid grandchildren: killing their shell does not reach them. */
  const sleepers: number[] = [];
  afterEach(() => {
    for (const child of started.splice(0)) child.kill("SIGKILL");
    for (const pid of sleepers.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });

  /** A shell that starts `setsid sleep 300` and waits: its grandchild leads a session of its own. */
  async function shellWithSetsidChild() {
    const shell = spawn("sh", ["-c", "setsid sleep 300 & echo $!; wait"], { stdio: ["ignore", "pipe", "ignore"] });
    started.push(shell);
    let out = "";
    shell.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const sleeper = await until(() => (out.includes("\n") ? Number(out.trim()) : undefined));
    sleepers.push(sleeper);
    await until(() => (readProcess(sleeper)?.session === sleeper ? true : undefined));
    return { shell, sleeper };
  }

  it("uptimeTicks is never a tick behind a process's start time: a process started before the read was born by then", () => {
    // Floating point made "12345.67" * 100 round down a tick in about one read in thirteen.
    for (let i = 0; i < 40; i++) {
      const child = spawn("sleep", ["30"], { stdio: "ignore" });
      started.push(child);
      const born = readProcess(child.pid ?? 0)?.startTicks;
      const now = uptimeTicks();
      assert.ok(born !== undefined && born <= now, `started at tick ${born}, now is ${now}`);
    }
  });

  it("descendantsOf follows parent pids into a grandchild's own session; never the root", async () => {
    const { shell, sleeper } = await shellWithSetsidChild();
    const found = descendantsOf(process.pid, readProcesses()).map((e) => e.pid);
    assert.ok(found.includes(shell.pid ?? -1), "the shell");
    assert.ok(found.includes(sleeper), "the setsid grandchild");
    assert.ok(!found.includes(process.pid), "not the root");
    const entry = readProcess(sleeper);
    assert.ok(entry !== undefined && entry.pgrp === sleeper && entry.session === sleeper && entry.ppid === shell.pid);
    process.kill(sleeper, "SIGKILL");
  });

  /** Runs `body` with fs.readFileSync seen (and maybe refused) by `watch`: what the process table reads. */
  function watchingReads<T>(watch: (path: string) => void, body: () => T): T {
    const real = fs.readFileSync;
    fs.readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      watch(String(path));
      return (real as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof fs.readFileSync;
    syncBuiltinESMExports();
    try {
      return body();
    } finally {
      fs.readFileSync = real;
      syncBuiltinESMExports();
    }
  }

  it("descendantsOf, given no table, reads the descendants' entries only, not all of /proc", async () => {
    const { shell, sleeper } = await shellWithSetsidChild();
    assert.ok(readProcesses().length > 20, "enough processes on the machine for the count to tell");
    const stats: string[] = [];
    const found = watchingReads(
      (path) => void (/^\/proc\/\d+\/stat$/.test(path) && stats.push(path)),
      () => descendantsOf(process.pid).map((e) => e.pid),
    );
    assert.ok(found.includes(shell.pid ?? -1) && found.includes(sleeper), "the shell and its setsid child");
    assert.deepEqual(new Set(found), new Set(descendantsOf(process.pid, readProcesses()).map((e) => e.pid)), "as the full scan finds");
    assert.ok(stats.length <= found.length + 2, `read ${stats.length} stat files for ${found.length} descendants`);
  });

  it("descendantsOf falls back to the whole table when the kernel has no children files", async () => {
    const { shell, sleeper } = await shellWithSetsidChild();
    let refused = 0;
    const found = watchingReads(
      (path) => {
        if (!path.endsWith("/children")) return;
        refused += 1;
        throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
      },
      () => descendantsOf(process.pid).map((e) => e.pid),
    );
    assert.ok(refused > 0, "the walk tried the children files");
    assert.ok(found.includes(shell.pid ?? -1) && found.includes(sleeper), "the shell and its setsid child, by the full scan");
    assert.ok(!found.includes(process.pid));
  });

  it("terminate stops what it was given, and never signals a pid whose start time differs (a reused pid)", async () => {
    const { sleeper } = await shellWithSetsidChild();
    const real = readProcess(sleeper);
    assert.ok(real !== undefined);
    // The same pid with another start time stands for a process that was gone and whose pid was reused.
    const impostor = { ...real, startTicks: real.startTicks - 1 };
    const untouched = await terminate([impostor], { graceMs: 50 });
    assert.deepEqual(untouched, { terminated: [], killed: [], remaining: [] });
    assert.equal(stillRunning(real), true, "the process with that pid now was not signalled");
    const stopped = await terminate([real], { graceMs: 1000 });
    assert.deepEqual(stopped.terminated, [sleeper]);
    assert.equal(stillRunning(real), false);
  });

  it("terminate sends SIGKILL to what ignores SIGTERM", async () => {
    const stubborn = spawn("sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], { stdio: ["ignore", "pipe", "ignore"] });
    started.push(stubborn);
    await new Promise((resolve) => stubborn.stdout.once("data", resolve));
    const entry = readProcess(stubborn.pid ?? -1);
    assert.ok(entry !== undefined);
    const result = await terminate([entry], { graceMs: 100 });
    assert.deepEqual([result.terminated, result.killed, result.remaining], [[entry.pid], [entry.pid], []]);
  });
});
