import assert from "node:assert/strict";
import type { Task } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { DatabaseTaskStore } from "@a2a-js/sdk/server/database";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { cancel, cancelError, clientOf, startTask, textOf, workOf } from "./a2a-tasks.js";
import { BACKENDS } from "./backends.js";
import { here, type ReplicaProcess, ReplicaSet, taskStoreDatabase } from "./replica-processes.js";
import { startHaproxy } from "./haproxy.js";
import { freePort } from "./servers.js";
import { until } from "./until.js";

describe("A2A across replicas on the SDK's DatabaseTaskStore (PostgreSQL)", function () {
  this.timeout(60_000);
  const database = taskStoreDatabase();

  it("a final status is never replaced in the store, whichever process writes; late-persisted artifacts still land", async () => {
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }) });
    try {
      const store = new DatabaseTaskStore(db);
      const context = new ServerCallContext();
      const task = (state: number, artifacts: number) => ({
        id: "race-1", contextId: "c", history: [], metadata: {},
        status: { state, message: undefined, timestamp: new Date().toISOString() },
        artifacts: Array.from({ length: artifacts }, (_, i) => ({
          artifactId: `a${i}`, name: "", description: "", parts: [], metadata: undefined, extensions: [],
        })),
      }) as unknown as Task;
      await store.save(task(2, 1), context);
      await store.save(task(5, 1), context);
      await store.save(task(2, 2), context); // a late `working` with one more artifact
      await store.save(task(3, 3), context); // and a late `completed`
      const stored = await store.load("race-1", context);
      assert.equal(stored?.status?.state, 5);
      assert.equal(stored?.artifacts.length, 3);
    } finally {
      await db.destroy();
    }
  });

  for (const backend of BACKENDS) {
    describe(`with the ${backend.name} cancel bus`, () => {
      const replicas = new ReplicaSet(backend, here("./a2a-replica.js"), () => ({ DB_URL: database.url }));
      const start = (name: string, extra?: Record<string, string>) => replicas.start(name, extra);

      it("a cancel reaching replica B stops the work on A: canceled, no artifact after the stop", async () => {
        const [a, b] = [await start("a"), await start("b")];
        const task = await startTask(await clientOf(a), 200);
        await until(async () => ((await workOf(a, task.id))?.steps ?? 0) > 2 || undefined, "the work made progress on A");
        const answer = await cancel(await clientOf(b), task.id);
        assert.equal(answer.status?.state, 5, "B answers canceled");
        const work = await workOf(a, task.id);
        assert.ok(work?.aborted && work.returned, "A's work saw its signal and returned before B answered");
        assert.ok((work?.steps ?? 0) < 200, "it did not run to the end");
        const stored = await (await clientOf(a)).getTask({ tenant: "", id: task.id });
        assert.equal(stored.status?.state, 5);
        assert.ok(stored.artifacts.length <= (work?.steps ?? 0), "no artifact after the stop");
        // Artifacts the work produced before it stopped may be persisted after the final state.
        const persisted = await until(async () => {
          const { artifacts } = await (await clientOf(a)).getTask({ tenant: "", id: task.id });
          return artifacts.length === work?.steps ? artifacts.length : undefined;
        }, "one artifact per step done");
        assert.equal(persisted, work?.steps, "one artifact per step done, none after the stop");
      });

      it("behind haproxy with 3 replicas, a cancel landing on any replica stops each task where it runs", async () => {
        const port = await freePort();
        const publicUrl = { PUBLIC_URL: `http://127.0.0.1:${port}` };
        const three = [await start("a", publicUrl), await start("b", publicUrl), await start("c", publicUrl)];
        replicas.balancer = await startHaproxy(three.map((replica) => replica.port), port);
        const client = await new ClientFactory().createFromUrl(replicas.balancer.url);
        const tasks = await Promise.all(Array.from({ length: 6 }, () => startTask(client, 500)));
        const ownerOf = async (taskId: string) => {
          for (const replica of three) if (((await workOf(replica, taskId))?.steps ?? 0) > 0) return replica;
          return undefined;
        };
        const owners = await Promise.all(tasks.map((task) => until(() => ownerOf(task.id), "the task's work started")));
        assert.ok(new Set(owners.map((owner) => owner.name)).size > 1, "the tasks run on more than one replica");
        const answers = await Promise.all(tasks.map((task) => cancel(client, task.id)));
        assert.deepEqual(answers.map((answer) => answer.status?.state), tasks.map(() => 5));
        for (const [i, task] of tasks.entries()) {
          const work = await workOf(owners[i] as ReplicaProcess, task.id);
          assert.ok(work?.aborted && work.returned, `task ${i}'s work stopped on ${owners[i]?.name}`);
          const stored = await client.getTask({ tenant: "", id: task.id });
          assert.ok(stored.artifacts.length <= (work?.steps ?? 0), `task ${i}: no artifact after the stop`);
          // Artifacts the work produced before it stopped may be persisted after the final state.
          await until(async () => (await client.getTask({ tenant: "", id: task.id })).artifacts.length === work?.steps || undefined,
            `task ${i}: every artifact of the work persisted`);
          assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 5);
        }
      });

      it("a cancel reaching the owner itself is answered there (no bus round trip needed)", async () => {
        const a = await start("a");
        const client = await clientOf(a);
        const task = await startTask(client, 200);
        await until(async () => ((await workOf(a, task.id))?.steps ?? 0) > 0 || undefined, "the work started");
        assert.equal((await cancel(client, task.id)).status?.state, 5);
        assert.ok((await workOf(a, task.id))?.aborted);
      });

      it("a replica that dies with a task running: the cancel answers owner-gone (no hang) and the task is marked failed", async () => {
        const leaseMs = "400";
        const [a, b] = [await start("a", { LEASE_MS: leaseMs }), await start("b", { LEASE_MS: leaseMs })];
        const task = await startTask(await clientOf(a), 10_000);
        await until(async () => ((await (await clientOf(a)).getTask({ tenant: "", id: task.id })).artifacts.length > 0) || undefined,
          "an artifact persisted");
        await a.kill();
        const client = await clientOf(b);
        // Until A's lease expires the cancel is "unconfirmed" (an error too); never a hang, never canceled.
        const error = await until(async () => {
          const failure = await cancelError(client, task.id);
          return /replica that ran it \(a\) is gone/.test(failure.message) ? failure : undefined;
        }, "the cancel found A gone");
        assert.match(error.message, /marked failed/);
        const stored = await client.getTask({ tenant: "", id: task.id });
        assert.equal(stored.status?.state, 4, "the store says the task failed");
        // The marking keeps what the store held: the user's message and every artifact persisted.
        assert.deepEqual(stored.history.map(textOf), ["run 10000"], "the history (the user's message) is kept");
        assert.ok(stored.artifacts.length > 0, "the artifacts persisted before the kill are kept");
      });

      it("a task waiting for input (its work returned) is cancelled by any replica: canceled, not marked failed", async () => {
        const [a, b] = [await start("a", { LEASE_MS: "300" }), await start("b", { LEASE_MS: "300" })];
        const task = await startTask(await clientOf(a), "ask");
        await until(async () => (await workOf(a, task.id))?.returned || undefined, "the work returned");
        const answer = await cancel(await clientOf(b), task.id);
        assert.equal(answer.status?.state, 5);
      });

      it("the bus down at start: a cross-replica cancel answers a clear error at once; a local one works", async () => {
        const dead = { BUS_URL: backend.deadUrl(await freePort()) };
        const [a, b] = [await start("a", dead), await start("b", dead)];
        const [first, second] = [await startTask(await clientOf(a), 10_000), await startTask(await clientOf(a), 10_000)];
        await until(async () => ((await workOf(a, second.id))?.steps ?? 0) > 0 || undefined, "the work started");
        const error = await cancelError(await clientOf(b), first.id);
        assert.match(error.message, /could not reach the replica running it: the \w+ cancel bus is unavailable/);
        assert.equal((await workOf(a, first.id))?.aborted, false, "the task B could not reach still runs");
        assert.equal((await cancel(await clientOf(a), second.id)).status?.state, 5, "A cancels its own task");
        assert.equal((await cancel(await clientOf(a), first.id)).status?.state, 5);
      });

      it("the bus down mid-run: a cross-replica cancel answers a clear error, a local one still works", async () => {
        const [a, b] = [await start("a"), await start("b")];
        const [first, second] = [await startTask(await clientOf(a), 10_000), await startTask(await clientOf(a), 10_000)];
        await until(async () => ((await workOf(a, second.id))?.steps ?? 0) > 0 || undefined, "the work started");
        await replicas.bus.stop();
        try {
          const error = await until(async () => {
            const failure = await cancelError(await clientOf(b), first.id);
            return /could not reach the replica running it/.test(failure.message) ? failure : undefined;
          }, "B noticed the bus is down");
          assert.match(error.message, /cancel bus is unavailable/);
          assert.equal((await cancel(await clientOf(a), second.id)).status?.state, 5, "A cancels its own task");
        } finally {
          await replicas.bus.start();
        }
        assert.equal((await workOf(a, first.id))?.aborted, false, "the task B could not reach still runs");
        const answer = await until(async () => {
          try {
            return await cancel(await clientOf(b), first.id);
          } catch {
            return undefined;
          }
        }, "B reaches A again once the bus is back", 20_000);
        assert.equal(answer.status?.state, 5);
      });
    });
  }
});
