import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { BusUnavailableError, type CancelBus } from "../../src/replicas/index.js";
import type { OrphanedClaim } from "../../src/replicas/cancel-bus.js";
import { eventually } from "../support/wire-assertions.js";
import { BACKENDS, OpenBuses } from "./backends.js";
import type { RealServer } from "./servers.js";
import { until } from "./until.js";

const OWNER_PROCESS = fileURLToPath(new URL("./owner-process.js", import.meta.url));
const REPLICAS = fileURLToPath(new URL("../../src/replicas/index.js", import.meta.url));
const ORPHAN_SWEEP = fileURLToPath(new URL("../../src/replicas/orphan-sweep.js", import.meta.url));
const LEASE_MS = 300;

/** What one sweep handed over or reported, as the test sees it. */
class SweepLog {
  readonly handed: OrphanedClaim[] = [];
  readonly errors: { error: Error; orphan?: OrphanedClaim }[] = [];
  constructor(private readonly keep = false) {}
  readonly options = (everyMs = 50) => ({
    everyMs,
    onOrphan: async (orphan: OrphanedClaim) => {
      this.handed.push(orphan);
      if (this.keep) throw new Error(`kept ${orphan.key}`); // a rejection keeps the record for the next sweep
    },
    onError: (error: Error, orphan?: OrphanedClaim) => {
      this.errors.push({ error, ...(orphan !== undefined ? { orphan } : {}) });
    },
  });
  keys = () => this.handed.map((orphan) => orphan.key);
}

for (const backend of BACKENDS) {
  describe(`the orphan sweep on ${backend.name}`, function () {
    this.timeout(30_000);
    let server: RealServer;
    const buses = new OpenBuses();
    const owners: ChildProcess[] = [];
    before(async () => {
      server = await backend.start();
    });
    after(async () => {
      await server?.close();
    });
    afterEach(async () => {
      for (const owner of owners.splice(0)) owner.kill("SIGKILL");
      await buses.closeAll();
    });

    /** A replica process holding `key` with `record` (never confirming a cancel): kill it to leave an orphan. */
    const owner = async (key: string, record: string, replica: string) => {
      const child = spawn(process.execPath, [OWNER_PROCESS, backend.name, server.url, key, String(LEASE_MS), record, replica], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      owners.push(child);
      await once(child.stdout, "data");
      return {
        kill: async () => {
          child.kill("SIGKILL");
          if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
        },
      };
    };
    const sweeper = (replica: string) => buses.open(backend, server.url, { replica, leaseMs: LEASE_MS });

    it("a killed replica's claim is handed over once its lease expired, naming replica and record, then forgotten", async () => {
      const first = await owner("t1:first", "record-1", "doomed-1");
      const sweep = new SweepLog();
      (await sweeper("s")).sweepOrphans("t1:", sweep.options());
      await first.kill();
      const handed = await eventually(() => sweep.handed[0], "the sweep handed the orphan over");
      assert.deepEqual(handed, { key: "t1:first", replica: "doomed-1", record: "record-1" });
      // Later sweeps ran (they found the second orphan) and never handed the first one again.
      await (await owner("t1:second", "record-2", "doomed-2")).kill();
      await eventually(() => sweep.keys().includes("t1:second") || undefined, "a later sweep found the second orphan");
      assert.deepEqual(sweep.keys(), ["t1:first", "t1:second"]);
      assert.deepEqual(sweep.errors, []);
    });

    it("a live replica's claim is never handed over, even one that does not confirm cancels; released work leaves nothing", async () => {
      await owner("t2:live", "live", "slow");
      const s = await sweeper("s");
      assert.deepEqual(await s.cancel("t2:live", { waitMs: 100 }), { kind: "unconfirmed", owner: "slow" }, "the live owner is slow");
      const other = await sweeper("other");
      other.claim("t2:released", async () => undefined, { record: "released" }).release();
      const sweep = new SweepLog();
      s.sweepOrphans("t2:", sweep.options());
      await (await owner("t2:dead", "dead", "doomed")).kill();
      await eventually(() => sweep.keys().includes("t2:dead") || undefined, "the dead owner's claim was found");
      // Its lease expired for as long as the live owner's ran: one more orphan, one more sweep.
      await (await owner("t2:dead-2", "dead", "doomed-2")).kill();
      await eventually(() => sweep.keys().includes("t2:dead-2") || undefined, "the second dead owner's claim was found");
      assert.deepEqual(sweep.keys(), ["t2:dead", "t2:dead-2"], "neither the live claim nor the released one");
    });

    it("a claim still held when its bus closes is left for the sweep (the work was abandoned)", async () => {
      const closing = await buses.open(backend, server.url, { replica: "closing", leaseMs: LEASE_MS });
      closing.claim("t3:held", () => new Promise(() => undefined), { record: "held" });
      closing.claim("t3:unrecorded", () => new Promise(() => undefined));
      const s = await sweeper("s");
      await until(async () => (await s.cancel("t3:held", { waitMs: 50 })).kind === "unconfirmed" || undefined, "the claim was leased");
      await closing.close();
      const sweep = new SweepLog();
      s.sweepOrphans("t3:", sweep.options());
      const handed = await eventually(() => sweep.handed[0], "the sweep found the abandoned claim");
      assert.deepEqual(handed, { key: "t3:held", replica: "closing", record: "held" });
    });

    it("stop() and close() end a bus's sweeps: a witness keeps finding the orphan, the stopped sweeps never do", async () => {
      const witness = new SweepLog(true);
      const [stopped, closed] = [new SweepLog(), new SweepLog()];
      (await sweeper("witness")).sweepOrphans("t4:", witness.options());
      (await sweeper("stopped")).sweepOrphans("t4:", stopped.options()).stop();
      const closing: CancelBus = await backend.bus(server.url, { replica: "closed", leaseMs: LEASE_MS });
      closing.sweepOrphans("t4:", closed.options());
      await closing.close();
      assert.throws(() => closing.sweepOrphans("t4:", closed.options()), /closed/);
      await (await owner("t4:dead", "dead", "doomed")).kill();
      await eventually(() => (witness.handed.length >= 4 ? true : undefined), "the witness swept the orphan four times");
      // A sweep left running on the closed bus would report its backend gone at every round.
      assert.deepEqual([stopped.handed, closed.handed, stopped.errors, closed.errors], [[], [], [], []]);
      // The witness's rejections were reported with their orphan, not thrown.
      assert.match(witness.errors[0]?.error.message ?? "", /kept t4:dead/);
      assert.equal(witness.errors[0]?.orphan?.key, "t4:dead");
    });

    it("the backend down: each sweep reports BusUnavailableError through onError and the process goes on", async () => {
      const sweep = new SweepLog();
      const s = await sweeper("s");
      s.sweepOrphans("t5:", sweep.options());
      await server.stop();
      try {
        const failed = await eventually(() => sweep.errors[0], "a sweep reported the backend down", 15_000);
        assert.ok(failed.error instanceof BusUnavailableError, String(failed.error));
        assert.match(failed.error.message, new RegExp(`the ${backend.name} cancel bus is unavailable`));
      } finally {
        await server.start();
      }
      await eventually(() => s.connected || undefined, "the bus reconnected", 15_000);
    });

    it("a bad everyMs is a RangeError naming it, and no sweep starts", async () => {
      const s = await sweeper("s");
      for (const everyMs of [0, 9, -100, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "100" as unknown as number]) {
        assert.throws(() => s.sweepOrphans("t6:", { ...new SweepLog().options(), everyMs }), (error: unknown) =>
          error instanceof RangeError && /everyMs must be an integer number of ms from 10 to 2147483647/.test(error.message));
      }
    });

    it("a sweep never keeps a process alive, and a process whose bus closed has nothing left to wait on", () => {
      // A sweep due in 1,000 s, never stopped: the process still ends at once (the timer is unref'd).
      const bare = spawnSync(process.execPath, ["--input-type=module", "-e", `
        const { OrphanSweep } = await import(${JSON.stringify(ORPHAN_SWEEP)});
        new OrphanSweep({ everyMs: 1_000_000, onOrphan: async () => {}, onError: () => {} }, async () => [], async () => {});
        process.stdout.write("started");`], { encoding: "utf8", timeout: 20_000 });
      assert.equal(bare.status, 0, bare.stderr);
      assert.equal(bare.stdout, "started");
      // A bus sweeping every 10 ms, closed: no process.exit, the process ends by itself.
      const closed = spawnSync(process.execPath, ["--input-type=module", "-e", `
        const r = await import(${JSON.stringify(REPLICAS)});
        const bus = await r.${backend.name}CancelBus(${JSON.stringify(server.url)}, { leaseMs: 300 });
        bus.sweepOrphans("t7:", { everyMs: 10, onOrphan: async () => {}, onError: () => {} });
        await new Promise((resolve) => setTimeout(resolve, 50));
        await bus.close();
        process.stdout.write("closed");`], { encoding: "utf8", timeout: 20_000 });
      assert.equal(closed.status, 0, closed.stderr);
      assert.equal(closed.stdout, "closed");
    });
  });
}
