import assert from "node:assert/strict";
import type { Client } from "@a2a-js/sdk/client";
import { TaskNotCancelableError } from "@a2a-js/sdk/errors";
import {
  CancelDeniedError,
  cancelGuardInterceptor,
  cancelReasoning,
  guardCancelTasks,
  type GuardDecision,
  GuardianClient,
  type GuardianRules,
} from "../../src/a2a/index.js";
import { eventually } from "../support/wire-assertions.js";
import { cancelOf, CLIENT_CARD, rawCancel, sdkClient, startTask, untilFinal, type Version, VERSIONS } from "./a2a-clients.js";
import { type A2aServer, SERVER_CARD_NAME, resetA2aServer, startA2aServer } from "./a2a-server.js";
import { aosRequest, AosCancelRequestShape, SEED_CLIENT_EXAMPLE } from "./aos-shape.js";
import { recordingGuardian, type RecordingGuardian } from "./guardians.js";

const LONG = 1_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const methodFor = (version: Version) => (version === "1.0" ? "CancelTask" : "tasks/cancel");

describe("A2A cancel behind AOS guard hooks: real @a2a-js/sdk server and client, real guardian on loopback", () => {
  let server: A2aServer;
  let guardian: RecordingGuardian | undefined;
  const guardianClients: GuardianClient[] = [];
  const decisions: GuardDecision[] = [];

  const guardianClient = (url: string) => {
    const client = new GuardianClient({ url, onDecision: (d) => decisions.push(d) });
    guardianClients.push(client);
    return client;
  };
  /** Guards the server with a guardian applying `rules`; returns the guardian. */
  const withGuardian = async (rules: GuardianRules) => (guardian = await recordingGuardian(rules));
  const guardServer = (g: RecordingGuardian) =>
    server.use(guardCancelTasks(server.inner, { guardian: guardianClient(g.url) }));
  const guardedClient = (version: Version, g: RecordingGuardian, reasoning?: string): Promise<Client> =>
    sdkClient(server, version, [
      cancelGuardInterceptor({
        guardian: guardianClient(g.url),
        self: CLIENT_CARD,
        ...(reasoning !== undefined ? { reasoning } : {}),
      }),
    ]);
  const started = (taskId: string) => eventually(() => ((server.work.progress.get(taskId) ?? 0) > 0 || undefined), "work started");

  before(async () => {
    server = await startA2aServer();
  });
  afterEach(async () => {
    await resetA2aServer(server);
    decisions.length = 0;
    for (const c of guardianClients.splice(0)) c.close();
    await guardian?.close();
    guardian = undefined;
  });
  after(() => server.close());

  it("the test's AOS schema, written from the seed, accepts the seed's own example", () => {
    assert.ok(AosCancelRequestShape.safeParse(SEED_CLIENT_EXAMPLE).success);
  });

  for (const version of VERSIONS) {
    describe(`over ${methodFor(version)} (A2A ${version}${version === "0.3" ? ", the SDK's v0.3 compat layer" : ""})`, () => {
      it("allow on both hooks: the task ends canceled and the executor's work has stopped", async () => {
        const g = await withGuardian({ default: "allow" });
        guardServer(g);
        const client = await guardedClient(version, g);
        const task = await startTask(client, LONG);
        await started(task.id);

        const answer = await cancelOf(client, task.id, { context: cancelReasoning("The story is long enough.") });

        assert.equal(answer.status?.state, 5, "the task is canceled");
        assert.ok(server.work.aborted.has(task.id) && server.work.returned.has(task.id), "the work saw its signal and returned");
        const frozen = server.work.progress.get(task.id);
        assert.ok(frozen !== undefined && frozen < LONG);
        await sleep(50);
        assert.equal(server.work.progress.get(task.id), frozen, "the work's own counter has stopped");
        assert.deepEqual(server.cancelsReceived.map((c) => c.method), [methodFor(version)]);
        assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 5);

        // Both hooks asked the guardian, in the AOS shape of the seed.
        const [clientAsk, serverAsk] = g.requests.map(aosRequest);
        assert.equal(g.requests.length, 2);
        assert.ok(clientAsk && serverAsk);
        assert.equal(clientAsk.params.payload.method, methodFor(version));
        assert.equal(clientAsk.params.payload.params.id, task.id);
        assert.deepEqual(clientAsk.params.context.from.agent, CLIENT_CARD, "client hook: the full card of the observed agent in from");
        assert.equal(clientAsk.params.reasoning, "The story is long enough.");
        assert.equal(clientAsk.params.context.to.agent.name, SERVER_CARD_NAME);
        assert.equal(serverAsk.params.payload.method, methodFor(version));
        assert.equal(serverAsk.params.payload.params.id, task.id);
        const to = serverAsk.params.context.to.agent;
        assert.equal(to.name, SERVER_CARD_NAME);
        assert.equal(to.description, "Writes very long stories.", "server hook: the full card in to");
        assert.ok(Array.isArray(to.supportedInterfaces) && Array.isArray(to.skills));
        assert.equal(serverAsk.params.reasoning, undefined);
        assert.notEqual(clientAsk.id, serverAsk.id, "a fresh UUID per guardian request");

        assert.deepEqual(decisions.map((d) => [d.hook, d.decision, d.source]), [
          ["client", "allow", "guardian"],
          ["server", "allow", "guardian"],
        ]);
        assert.deepEqual(g.log.map((e) => e.decision), ["allow", "allow"]);
      });

      it("deny at the client hook: nothing is sent, the caller gets CancelDeniedError, the task runs on", async () => {
        const g = await withGuardian({
          default: "allow",
          rules: [{ decision: "deny", from: CLIENT_CARD.name, message: "cancels need approval", reasonCode: ["needs-approval"] }],
        });
        const client = await guardedClient(version, g, "The user lost interest.");
        const task = await startTask(client, LONG);
        await started(task.id);

        await assert.rejects(cancelOf(client, task.id), (error: unknown) => {
          assert.ok(error instanceof CancelDeniedError);
          assert.equal(error.taskId, task.id);
          assert.equal(error.decision.decision, "deny");
          assert.equal(error.decision.source, "guardian");
          assert.equal(error.decision.message, "cancels need approval");
          assert.deepEqual(error.reasonCode, ["needs-approval"]);
          return true;
        });

        assert.deepEqual(server.cancelsReceived, [], "no cancel reached the server");
        const before = server.work.progress.get(task.id) ?? 0;
        await eventually(() => ((server.work.progress.get(task.id) ?? 0) > before || undefined), "the work goes on");
        assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 2);
        const ask = aosRequest(g.requests[0]);
        assert.equal(g.requests.length, 1);
        assert.equal(ask.params.reasoning, "The user lost interest.");
        assert.deepEqual(ask.params.context.from.agent, CLIENT_CARD);
      });

      it("deny at the server hook: the task runs to completion and the caller gets TaskNotCancelable naming the guard", async () => {
        const g = await withGuardian({
          default: "allow",
          rules: [{ decision: "deny", to: SERVER_CARD_NAME, message: "stories are never cut short", reasonCode: ["policy-7"] }],
        });
        guardServer(g);
        const client = await sdkClient(server, version);
        const steps = 40;
        const task = await startTask(client, steps);

        await assert.rejects(cancelOf(client, task.id), (error: Error) => {
          assert.match(error.message, /the AOS guard denied the cancel/);
          assert.match(error.message, /stories are never cut short/);
          // The guard data as the SDK client hands it over (docs/a2a.md shows this).
          assert.ok(error instanceof TaskNotCancelableError);
          const { data } = error as Error & { data?: unknown };
          const guard = version === "1.0" ? (data as { metadata: Record<string, string> }[])[0]?.metadata : (data as Record<string, unknown>);
          assert.equal(guard?.guard, "aos");
          assert.equal(guard?.decision, "deny");
          assert.deepEqual(guard?.reasonCode, version === "1.0" ? "policy-7" : ["policy-7"]);
          return true;
        });
        // The same error on the wire, as any A2A client sees it.
        const wire = await rawCancel(server.url, version, task.id);
        assert.equal(wire.error?.code, -32002, "TaskNotCancelable");
        assert.match(wire.error.message, /AOS guard denied/);
        if (version === "0.3") {
          assert.deepEqual(
            { ...(wire.error.data as object), requestId: undefined },
            {
              guard: "aos",
              decision: "deny",
              source: "guardian",
              message: "stories are never cut short",
              reasonCode: ["policy-7"],
              requestId: undefined,
            },
          );
        } else {
          const [info] = wire.error.data as { reason: string; metadata: Record<string, string> }[];
          assert.equal(info?.reason, "TASK_NOT_CANCELABLE");
          assert.equal(info.metadata.guard, "aos");
          assert.equal(info.metadata.decision, "deny");
          assert.equal(info.metadata.reasonCode, "policy-7");
        }

        const final = await untilFinal(client, task.id);
        assert.equal(final.status?.state, 3, "the task completed");
        assert.equal(server.work.progress.get(task.id), steps, "every step of the work ran");
        assert.ok(!server.work.aborted.has(task.id));
        for (const request of g.requests) {
          const ask = aosRequest(request);
          assert.equal(ask.params.context.to.agent.description, "Writes very long stories.");
          assert.equal(ask.params.context.from.role, "client");
        }
        assert.equal(g.requests.length, 2);
      });
    });
  }

  describe("bad input: a clear error, nothing cancelled by mistake, the guardian not asked, the server survives", () => {
    for (const version of VERSIONS) {
      it(`at the server hook (A2A ${version})`, async () => {
        const g = await withGuardian({ default: "allow" });
        guardServer(g);
        const client = await sdkClient(server, version);
        const task = await startTask(client, LONG);
        await started(task.id);
        const bad: [unknown, RegExp][] = [
          [{ id: "", metadata: {} }, /task id/],
          [{ id: "   ", metadata: {} }, /task id/],
          [{ id: "x".repeat(2000), metadata: {} }, /longer than 1024/],
        ];
        if (version === "0.3") bad.push([{ id: 42, metadata: {} }, /task id/], [{ id: task.id, metadata: [1, 2] }, /metadata/]);
        for (const [params, message] of bad) {
          const wire = await rawCancel(server.url, version, undefined, params);
          assert.equal(wire.error?.code, -32602, JSON.stringify(params).slice(0, 80));
          assert.match(wire.error.message, message);
        }
        assert.equal(g.requests.length, 0, "the guardian was not asked");
        assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 2, "the task runs on");
        assert.ok(!server.work.returned.has(task.id));
        // The server survives: a valid cancel right after goes through.
        assert.equal((await cancelOf(client, task.id)).status?.state, 5);
        assert.equal(g.requests.length, 1);
      });

      it(`at the client hook (A2A ${version}): GuardInputError and nothing sent`, async () => {
        const g = await withGuardian({ default: "allow" });
        const client = await guardedClient(version, g);
        const task = await startTask(client, LONG);
        await started(task.id);
        for (const id of ["", "   "]) {
          await assert.rejects(cancelOf(client, id), (error: Error) => error.name === "GuardInputError" && /task id/.test(error.message));
        }
        await assert.rejects(
          client.cancelTask({ tenant: "", id: task.id, metadata: "oops" as never }),
          (error: Error) => error.name === "GuardInputError" && /metadata/.test(error.message),
        );
        assert.deepEqual(server.cancelsReceived, []);
        assert.equal(g.requests.length, 0);
        assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 2);
      });
    }
  });

  it("over REST (HTTP+JSON) the same server hook applies: denied is HTTP 400 naming the guard, allowed cancels", async () => {
    const client = await sdkClient(server, "1.0");
    const [denied, allowed] = await Promise.all([startTask(client, LONG), startTask(client, LONG)]);
    const g = await withGuardian({ default: "allow", rules: [{ decision: "deny", taskId: `^${denied.id}$` }] });
    guardServer(g);
    const restCancel = (id: string) =>
      fetch(`${server.restUrl}/tasks/${id}:cancel`, {
        method: "POST",
        headers: { "content-type": "application/json", "A2A-Version": "1.0" },
        body: "{}",
      });

    const refused = await restCancel(denied.id);
    assert.equal(refused.status, 400);
    type Detail = { reason?: string; metadata?: Record<string, string> };
    const body = (await refused.json()) as { error: { message: string; details: Detail[] } };
    assert.match(body.error.message, /AOS guard denied/);
    const info = body.error.details.find((d) => d.reason === "TASK_NOT_CANCELABLE");
    assert.equal(info?.metadata?.guard, "aos");
    assert.equal((await client.getTask({ tenant: "", id: denied.id })).status?.state, 2, "the denied task runs on");

    const ok = await restCancel(allowed.id);
    assert.equal(ok.status, 200);
    assert.equal((await client.getTask({ tenant: "", id: allowed.id })).status?.state, 5);
    assert.ok(server.work.returned.has(allowed.id));
    assert.deepEqual(g.requests.map((r) => aosRequest(r).params.payload.params.id), [denied.id, allowed.id]);
  });

  it("two cancels of one task at once, through both hooks: each is answered once, canceled", async () => {
    const g = await withGuardian({ default: "allow" });
    guardServer(g);
    const client = await guardedClient("1.0", g);
    const task = await startTask(client, LONG);
    await started(task.id);
    const answers = await Promise.all([cancelOf(client, task.id), cancelOf(client, task.id), rawCancel(server.url, "0.3", task.id)]);
    assert.equal(answers[0].status?.state, 5);
    assert.equal(answers[1].status?.state, 5);
    assert.equal((answers[2].result as { status?: { state?: string } }).status?.state, "canceled");
    assert.equal(server.executor.running, 0);
  });

  it("a guarded cancel of a task that does not exist gets TaskNotFound unchanged, and the guardian is not asked", async () => {
    const g = await withGuardian({ default: "deny" });
    guardServer(g);
    for (const version of VERSIONS) {
      const wire = await rawCancel(server.url, version, "no-such-task");
      assert.equal(wire.error?.code, -32001);
      assert.equal(wire.error.data === undefined || !JSON.stringify(wire.error.data).includes("\"guard\""), true);
    }
    assert.equal(g.requests.length, 0);
  });

  it("a guarded cancel of a finished task gets TaskNotCancelable unchanged (no guard data), and the guardian is not asked", async () => {
    const g = await withGuardian({ default: "deny" });
    guardServer(g);
    const client = await sdkClient(server, "1.0");
    const task = await startTask(client, 1);
    await untilFinal(client, task.id);
    for (const version of VERSIONS) {
      const wire = await rawCancel(server.url, version, task.id);
      assert.equal(wire.error?.code, -32002);
      assert.doesNotMatch(wire.error.message, /guard/);
    }
    assert.equal(g.requests.length, 0);
  });
});
