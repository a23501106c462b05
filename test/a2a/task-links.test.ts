import assert from "node:assert/strict";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { Job } from "../../src/core/index.js";
import {
  A2aTaskLinks,
  cancelGuardInterceptor,
  GuardianClient,
  type TaskCancelOutcome,
} from "../../src/a2a/index.js";
import { eventually } from "../support/wire-assertions.js";
import { CLIENT_CARD, sdkClient, startTask, untilFinal } from "./a2a-clients.js";
import { type A2aServer, startA2aServer } from "./a2a-server.js";
import { recordingGuardian, type RecordingGuardian } from "./guardians.js";

describe("A2aTaskLinks: remote tasks as jobs of the shared tree, cancelled through the guard", () => {
  let server: A2aServer;
  let guardian: RecordingGuardian;
  let guardianClient: GuardianClient;
  before(async () => {
    server = await startA2aServer();
    guardian = await recordingGuardian({ default: "allow" });
    guardianClient = new GuardianClient({ url: guardian.url });
  });
  afterEach(async () => {
    await server.cancelLeftovers();
    await eventually(() => (server.executor.running === 0 || undefined), "every task's work returned");
  });
  after(async () => {
    guardianClient.close();
    await server.close();
    await guardian.close();
  });
  const state = async (id: string) => (await server.inner.getTask({ tenant: "", id }, new ServerCallContext())).status?.state;

  it("cancelling a parent job (any binding's) cancels every linked task still running, not the finished ones", async () => {
    const client = await sdkClient(server, "1.0", [cancelGuardInterceptor({ guardian: guardianClient, self: CLIENT_CARD })]);
    const turn = new Job({ kind: "acp-prompt-turn" });
    const outcomes: TaskCancelOutcome[] = [];
    const links = new A2aTaskLinks({ client, parent: turn, onOutcome: (o) => outcomes.push(o) });
    const [a, b, done] = await Promise.all([startTask(client, 1_000_000), startTask(client, 1_000_000), startTask(client, 1)]);
    for (const task of [a, b, done]) links.add(task.id);
    assert.equal(turn.childCount, 3, "each task is a child job of the turn");
    await untilFinal(client, done.id);
    links.finished(done.id);
    const asked = guardian.requests.length;

    turn.cancel("session");
    // idle() resolves only once no task job is left.
    await links.idle();

    assert.equal(turn.childCount, 0);
    assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ["canceled", "canceled"]);
    assert.deepEqual(outcomes.map((o) => o.taskId).sort(), [a.id, b.id].sort());
    assert.equal(await state(a.id), 5);
    assert.equal(await state(b.id), 5);
    assert.equal(await state(done.id), 3);
    assert.equal(guardian.requests.length - asked, 2, "one guarded cancel per running task");
  });

  it("an aborted signal reports a denied cancel as denied, and the task runs on", async () => {
    const denyAll = await recordingGuardian({ default: "deny" });
    const denying = new GuardianClient({ url: denyAll.url });
    try {
      const client = await sdkClient(server, "0.3", [cancelGuardInterceptor({ guardian: denying, self: CLIENT_CARD })]);
      const controller = new AbortController();
      const outcomes: TaskCancelOutcome[] = [];
      const links = new A2aTaskLinks({ client, signal: controller.signal, onOutcome: (o) => outcomes.push(o) });
      const task = await startTask(client, 1_000_000);
      links.add(task.id);
      controller.abort();
      await links.idle();
      assert.deepEqual(outcomes.map((o) => o.outcome), ["denied"]);
      assert.equal(await state(task.id), 2);
      links.close();
    } finally {
      denying.close();
      await denyAll.close();
    }
  });

  it("a task linked after its signal aborted is cancelled at once", async () => {
    const client = await sdkClient(server, "1.0", [cancelGuardInterceptor({ guardian: guardianClient, self: CLIENT_CARD })]);
    const task = await startTask(client, 1_000_000);
    const links = new A2aTaskLinks({ client, signal: AbortSignal.abort() });
    links.add(task.id);
    await links.idle();
    assert.equal(await state(task.id), 5);
  });
});
