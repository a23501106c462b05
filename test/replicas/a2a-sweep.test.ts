import assert from "node:assert/strict";
import type { AgentCard, Task } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { CancellableExecutor, routeCancelsToOwner } from "../../src/a2a/index.js";
import { cancelError, clientOf, startTask, workOf } from "./a2a-tasks.js";
import { BACKENDS } from "./backends.js";
import { here, type ReplicaProcess, ReplicaSet, taskStoreDatabase } from "./replica-processes.js";
import { until } from "./until.js";

interface SweepReport {
  taskId?: string;
  replica?: string;
  outcome?: string;
  error?: string;
}

async function sweepsOf(replica: ReplicaProcess, taskId: string): Promise<SweepReport[]> {
  const answer = (await (await fetch(`${replica.baseUrl}/sweeps`)).json()) as { sweeps: SweepReport[] };
  return answer.sweeps.filter((event) => event.taskId === taskId);
}

const readTask = async (replica: ReplicaProcess, id: string): Promise<Task> => (await clientOf(replica)).getTask({ tenant: "", id });
const statusText = (task: Task) => JSON.stringify(task.status?.message?.parts ?? []);

/** Waits until `replica` reads `task` in state `state` (4 = failed). */
const untilState = (replica: ReplicaProcess, task: Task, state: number, what: string) =>
  until(async () => ((await readTask(replica, task.id)).status?.state === state ? true : undefined), what, 20_000);

const untilWorking = (replica: ReplicaProcess, task: Task) =>
  until(async () => ((await workOf(replica, task.id))?.steps ?? 0) > 0 || undefined, "the work started");

describe("A2A across replicas: the orphan sweep (sweepMs) on the SDK's DatabaseTaskStore", function () {
  this.timeout(60_000);
  const database = taskStoreDatabase();

  for (const backend of BACKENDS) {
    describe(`with the ${backend.name} cancel bus`, () => {
      const replicas = new ReplicaSet(backend, here("./a2a-replica.js"), () => ({ DB_URL: database.url, LEASE_MS: "400" }));
      const start = (name: string, extra?: Record<string, string>) => replicas.start(name, extra);

      it("a replica killed with a task running: a sweeping replica marks it failed, no cancel needed, naming why", async () => {
        const [a, b] = [await start("a"), await start("b", { SWEEP_MS: "100" })];
        const task = await startTask(await clientOf(a), 10_000);
        await untilWorking(a, task);
        await a.kill();
        await untilState(b, task, 4, "the sweep marked the dead replica's task failed");
        const stored = await readTask(b, task.id);
        const why = new RegExp("The replica running this task \\(a\\) stopped before the task ended; " +
          "a sweep found its replica's lease on the cancel bus expired");
        assert.match(statusText(stored), why);
        assert.deepEqual(await sweepsOf(b, task.id), [{ taskId: task.id, replica: "a", outcome: "marked-failed" }]);
      });

      it("a live replica's long task is never marked, while the tasks of two replicas killed one after the other are", async () => {
        const [a, b] = [await start("a"), await start("b", { SWEEP_MS: "100" })];
        const [c, d] = [await start("c"), await start("d")];
        const live = await startTask(await clientOf(a), 10_000);
        const [first, second] = [await startTask(await clientOf(c), 10_000), await startTask(await clientOf(d), 10_000)];
        await Promise.all([untilWorking(a, live), untilWorking(c, first), untilWorking(d, second)]);
        await c.kill();
        await untilState(b, first, 4, "the first dead replica's task was marked failed");
        await d.kill(); // one more orphan: sweeps ran after A's task had been running a whole lease and more
        await untilState(b, second, 4, "the second dead replica's task was marked failed");
        assert.equal((await readTask(b, live.id)).status?.state, 2, "the live replica's task still works");
        assert.equal((await workOf(a, live.id))?.aborted, false, "its work was never stopped");
        assert.deepEqual(await sweepsOf(b, live.id), [], "the sweep never handled it");
      });

      it("a task already final is left as it is: the sweep reports it left and writes nothing", async () => {
        const [a, b] = [await start("a"), await start("b")];
        const task = await startTask(await clientOf(a), 10_000);
        await untilWorking(a, task);
        await a.kill();
        // A cancel finds the task orphaned first and marks it failed; the claim's record stays on the bus.
        const ownerGone = async () =>
          /replica that ran it \(a\) is gone/.test((await cancelError(await clientOf(b), task.id)).message);
        await until(async () => (await ownerGone()) || undefined, "the cancel found A gone");
        const marked = await readTask(b, task.id);
        assert.match(statusText(marked), /a cancel found no live owner/);
        const sweeping = await start("s", { SWEEP_MS: "100" });
        const [report] = await until(async () => {
          const reports = await sweepsOf(sweeping, task.id);
          return reports.length > 0 ? reports : undefined;
        }, "the sweep met the task");
        assert.deepEqual(report, { taskId: task.id, replica: "a", outcome: "left" });
        const afterSweep = await readTask(b, task.id);
        assert.deepEqual(afterSweep.status, marked.status, "the cancel's failed status, untouched");
      });

      it("sweepMs is checked: a bad value is a RangeError naming it; a replicas port that cannot sweep, a TypeError", async () => {
        const bus = await backend.bus(replicas.bus.url, { replica: "options" });
        try {
          const executor = new CancellableExecutor(async () => undefined, { replicas: bus });
          const taskStore = new InMemoryTaskStore();
          const inner = new DefaultRequestHandler({} as AgentCard, taskStore, executor);
          for (const sweepMs of [0, 9, -1, 2.5, Number.NaN, 2 ** 31]) {
            assert.throws(() => routeCancelsToOwner(inner, { executor, replicas: bus, taskStore, sweepMs }), (error: unknown) =>
              error instanceof RangeError && /^routeCancelsToOwner: sweepMs must be an integer number of ms/.test(error.message));
          }
          const cancelOnly = { cancel: bus.cancel.bind(bus) };
          const needsSweeper = /sweepMs needs a `replicas` bus with sweepOrphans/;
          assert.throws(() => routeCancelsToOwner(inner, { executor, replicas: cancelOnly, taskStore, sweepMs: 100 }),
            (error: unknown) => error instanceof TypeError && needsSweeper.test(error.message));
          // Without sweepMs nothing is checked or started: the plain hook, as before.
          assert.ok(routeCancelsToOwner(inner, { executor, replicas: cancelOnly, taskStore }));
        } finally {
          await bus.close();
        }
      });
    });
  }
});
