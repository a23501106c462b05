import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BACKENDS } from "./backends.js";
import { startHaproxy } from "./haproxy.js";
import { here, type ReplicaProcess, ReplicaSet } from "./replica-processes.js";
import { until } from "./until.js";

const TOKEN = "Bearer replica-test";

interface CallAnswer {
  replica: string;
  aborted: boolean;
  steps: number;
}

interface RunAnswer {
  stopped: boolean;
  code: number | null;
  ms: number;
  abortedAfterMs?: number;
}

const invoke = (baseUrl: string, thread: string, call: string, owner = "alice") =>
  fetch(`${baseUrl}/invoke?thread=${thread}&call=${call}&owner=${owner}`).then((response) => response.json() as Promise<CallAnswer>);

async function notice(baseUrl: string, thread: string, call: string, token = TOKEN): Promise<number> {
  const response = await fetch(`${baseUrl}/cancel_tool_call`, {
    method: "POST",
    headers: { "content-type": "application/json", "authorization": token },
    body: JSON.stringify({ thread_id: thread, tool_call_id: call }),
  });
  await response.arrayBuffer();
  return response.status;
}

interface NoticeReport {
  toolCallId: string;
  effect: string;
  forwarded?: string;
  forwardedBy?: string;
}

/** B's onNotice reports for `call`, once there are `count`. */
const noticeReports = (replica: ReplicaProcess, call: string, count = 1) => until(async () => {
  const reports = ((await (await fetch(`${replica.baseUrl}/notices`)).json()) as { notices: NoticeReport[] }).notices
    .filter((report) => report.toolCallId === call);
  return reports.length >= count ? reports : undefined;
}, `${count} onNotice report(s) for ${call}`);

const running = async (replica: ReplicaProcess) =>
  ((await (await fetch(`${replica.baseUrl}/calls`)).json()) as { running: number }).running;

const forwarded = async (replica: ReplicaProcess) =>
  ((await (await fetch(`${replica.baseUrl}/forwarded`)).json()) as { forwarded: { toolCallId: string; outcome: string; message?: string }[] }).forwarded;

/** Running processes whose command line mentions `text` (with its process group). */
function processesMentioning(text: string): { pid: number; pgrp: number }[] {
  const found: { pid: number; pgrp: number }[] = [];
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").includes(text)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z") found.push({ pid: Number(name), pgrp: Number(pgrp) });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

for (const backend of BACKENDS) {
  describe(`RAP tool servers across replicas on the ${backend.name} bus`, function () {
    this.timeout(60_000);
    const replicas = new ReplicaSet(backend, here("./rap-replica.js"));
    const start = (name: string) => replicas.start(name);

    it("a notice reaching replica B stops the call running on A", async () => {
      const [a, b] = [await start("a"), await start("b")];
      const answer = invoke(a.baseUrl, "t1", "c1");
      await until(async () => ((await running(a)) === 1) || undefined, "the call runs on A");
      assert.equal(await notice(b.baseUrl, "t1", "c1"), 200);
      const result = await answer;
      assert.deepEqual([result.replica, result.aborted], ["a", true]);
      assert.ok(result.steps < 10_000);
      const [event] = await until(async () => {
        const events = await forwarded(b);
        return events.length > 0 ? events : undefined;
      }, "B's forwarding reported");
      assert.equal(event?.outcome, "confirmed");
      const [report] = await noticeReports(b, "c1");
      assert.deepEqual(report, { toolCallId: "c1", effect: "remembered", forwarded: "confirmed", forwardedBy: "a" },
        "B's onNotice tells the forwarded outcome (issue 35.5)");
    });

    it("ownership holds across replicas: another principal's notice on B leaves alice's call on A running; hers stops it", async () => {
      const [a, b] = [await start("a"), await start("b")];
      const answer = invoke(a.baseUrl, "t-own", "c-own");
      await until(async () => ((await running(a)) === 1) || undefined, "the call runs on A");
      assert.equal(await notice(b.baseUrl, "t-own", "c-own", "Bearer replica-other"), 200);
      const [foreign] = await until(async () => {
        const events = await forwarded(b);
        return events.length > 0 ? events : undefined;
      }, "B's forwarding of mallory's notice reported");
      assert.equal(foreign?.outcome, "no-owner", "no replica runs mallory's call of those ids");
      assert.equal(await running(a), 1, "alice's call still runs");
      assert.equal(await notice(b.baseUrl, "t-own", "c-own"), 200);
      const result = await answer;
      assert.deepEqual([result.replica, result.aborted], ["a", true]);
    });

    it("alice's notice reaching B, where mallory runs a call of the same ids, still stops alice's call on A (issue 35.5)", async () => {
      const [a, b] = [await start("a"), await start("b")];
      const hers = invoke(a.baseUrl, "t-same", "c-same");
      const his = invoke(b.baseUrl, "t-same", "c-same", "mallory");
      await until(async () => ((await running(a)) === 1 && (await running(b)) === 1) || undefined, "both calls run");
      assert.equal(await notice(b.baseUrl, "t-same", "c-same"), 200);
      const result = await hers;
      assert.deepEqual([result.replica, result.aborted], ["a", true], "alice's call stopped on A");
      assert.equal(await running(b), 1, "mallory's call on B runs on: the notice was not his");
      const [event] = await until(async () => {
        const events = await forwarded(b);
        return events.length > 0 ? events : undefined;
      }, "B's forwarding reported");
      assert.equal(event?.outcome, "confirmed");
      const [report] = await noticeReports(b, "c-same");
      assert.deepEqual(report, { toolCallId: "c-same", effect: "not-owner", forwarded: "confirmed", forwardedBy: "a" },
        "B's onNotice tells that the notice stopped nothing here and what the forwarding did");
      assert.equal(await notice(b.baseUrl, "t-same", "c-same", "Bearer replica-other"), 200);
      assert.equal((await his).aborted, true);
    });

    it("an early notice is remembered through the bus: the call starts cancelled on whichever replica runs it", async () => {
      const [a, b] = [await start("a"), await start("b")];
      assert.equal(await notice(b.baseUrl, "t2", "early"), 200);
      await until(async () => ((await forwarded(b)).length > 0) || undefined, "B forwarded the notice");
      const result = await invoke(a.baseUrl, "t2", "early");
      assert.deepEqual([result.replica, result.aborted], ["a", true]);
      assert.equal(await running(a), 0);
    });

    it("early notices on B stop commands A starts right after tracking their calls: none runs to its end (issue 35.4)", async () => {
      const [a, b] = [await start("a"), await start("b")];
      const calls = Array.from({ length: 8 }, (_, i) => `early-run-${i}`);
      for (const call of calls) assert.equal(await notice(b.baseUrl, "t-run", call), 200);
      await until(async () => ((await forwarded(b)).length === calls.length) || undefined, "B forwarded every notice");
      const results = await Promise.all(calls.map((call) =>
        fetch(`${a.baseUrl}/run?thread=t-run&call=${call}`).then((response) => response.json() as Promise<RunAnswer>)));
      for (const [i, result] of results.entries()) {
        assert.equal(result.stopped, true, `call ${i} stopped (aborted ${result.abortedAfterMs} ms after it was tracked)`);
        assert.equal(result.code, null, `call ${i}: sleep did not run to its end`);
      }
      const after = results.map((result) => Math.round(result.abortedAfterMs ?? -1));
      process.stdout.write(`      ${backend.name}: early cancels took effect ${after.join(", ")} ms after track()\n`);
    });

    it("a SIGKILLed replica's tool processes die with it, its setsid'd ones too: no marker is ever written (issue 35.6)", async () => {
      const a = await start("a");
      const dir = mkdtempSync(join(tmpdir(), "rap-orphans-"));
      const marker = join(dir, "marker");
      const delay = `${4 + Math.floor(Math.random() * 1000) / 1000}`; // names the tool's sleeps
      const seen = () => [...new Map([...processesMentioning(marker), ...processesMentioning(`sleep ${delay}`)].map((p) => [p.pid, p])).values()];
      try {
        const { pid, tempDir } = (await (await fetch(`${a.baseUrl}/tool?thread=t-kill&call=c-kill&marker=${marker}&delay=${delay}`)).json()) as { pid: number; tempDir: string };
        const running = await until(async () => (seen().length === 4 ? seen() : undefined), "the tool's 4 processes run");
        assert.ok(running.some((p) => p.pgrp !== pid), "one of them left the tool's process group (setsid)");
        await a.kill();
        await until(async () => (seen().length === 0 || undefined), "no process of the tool is left", 10_000);
        assert.deepEqual(processesMentioning(marker).filter((p) => p.pgrp === pid), [], "the tool's group is gone");
        assert.equal(existsSync(`${marker}.group`), false, "the group's marker was never written");
        assert.equal(existsSync(`${marker}.setsid`), false, "the setsid'd marker was never written");
        rmSync(tempDir, { recursive: true, force: true }); // what a killed replica leaves behind (docs/scale-out.md, Faults)
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("behind haproxy with 3 replicas, a notice landing on any replica stops each call", async () => {
      const three = [await start("a"), await start("b"), await start("c")];
      replicas.balancer = await startHaproxy(three.map((replica) => replica.port));
      const url = replicas.balancer.url;
      const calls = ["h1", "h2", "h3", "h4", "h5", "h6"];
      const answers = calls.map((call) => invoke(url, "t3", call));
      await until(async () => {
        const counts = await Promise.all(three.map(running));
        return counts.reduce((sum, count) => sum + count, 0) === calls.length || undefined;
      }, "every call runs on some replica");
      for (const call of calls) assert.equal(await notice(url, "t3", call), 200);
      const results = await Promise.all(answers);
      assert.ok(results.every((result) => result.aborted), "every call stopped");
      assert.ok(new Set(results.map((result) => result.replica)).size > 1, "the calls ran on more than one replica");
    });

    it("the bus down mid-run: a local notice still stops its call; a forwarded one reports an error; after the restart it stops", async () => {
      const [a, b] = [await start("a"), await start("b")];
      const remote = invoke(a.baseUrl, "t4", "remote");
      const local = invoke(a.baseUrl, "t4", "local");
      await until(async () => ((await running(a)) === 2) || undefined, "both calls run on A");
      await replicas.bus.stop();
      try {
        assert.equal(await notice(a.baseUrl, "t4", "local"), 200);
        assert.equal((await local).aborted, true, "the local notice stopped its call");
        const failed = await until(async () => {
          assert.equal(await notice(b.baseUrl, "t4", "remote"), 200, "RAP answers every authentic notice 200");
          const events = await forwarded(b);
          return events.find((event) => event.outcome === "error");
        }, "B reported that it could not forward the notice");
        assert.match(failed.message ?? "", new RegExp(`the ${backend.name} cancel bus is unavailable`));
        assert.equal(await running(a), 1, "the remote call still runs");
      } finally {
        await replicas.bus.start();
      }
      const stopped = await until(async () => {
        await notice(b.baseUrl, "t4", "remote");
        return (await running(a)) === 0 || undefined;
      }, "a notice through B stops the call once the bus is back", 20_000);
      assert.ok(stopped);
      assert.equal((await remote).aborted, true);
    });
  });
}
