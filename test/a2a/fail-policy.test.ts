import assert from "node:assert/strict";
import {
  CancelDeniedError,
  cancelGuardInterceptor,
  guardCancelTasks,
  type GuardDecision,
  GuardianClient,
} from "../../src/a2a/index.js";
import type { FailPolicy, GuardFailure } from "../../src/a2a/guard-decision.js";
import { eventually } from "../support/wire-assertions.js";
import { cancelOf, CLIENT_CARD, sdkClient, startTask, type Version } from "./a2a-clients.js";
import { type A2aServer, resetA2aServer, startA2aServer } from "./a2a-server.js";
import { aosRequest } from "./aos-shape.js";
import { badGuardian, type Misbehaviour, MISBEHAVIOURS } from "./guardians.js";

const FAILURE: Record<Misbehaviour, GuardFailure> = {
  "down": "unreachable",
  "hang": "timeout",
  "garbage": "invalid-answer",
  "rpc-error": "rpc-error",
};
/** The hanging guardian's wait; the other kinds answer, so on a loaded machine their timeout must never come first. */
const HANG_TIMEOUT_MS = 150;
const timeoutFor = (kind: string) => (kind === "hang" ? HANG_TIMEOUT_MS : 30_000);

describe("A2A guard hooks with a guardian that cannot answer: the configured fail policy, on both hooks", () => {
  let server: A2aServer;
  before(async () => {
    server = await startA2aServer();
  });
  afterEach(async () => {
    await resetA2aServer(server);
  });
  after(() => server.close());

  for (const hook of ["client", "server"] as const) {
    for (const policy of ["deny", "allow"] as FailPolicy[]) {
      for (const [index, kind] of MISBEHAVIOURS.entries()) {
        // Both wire versions get every hook and policy; the kinds alternate between them.
        const version: Version = index % 2 === 0 ? "1.0" : "0.3";
        it(`${hook} hook, guardian ${kind}, fail ${policy === "deny" ? "closed" : "open"} (A2A ${version})`, async () => {
          const bad = await badGuardian(kind);
          const decisions: GuardDecision[] = [];
          const guardian = new GuardianClient({
            url: bad.url,
            failPolicy: policy,
            timeoutMs: timeoutFor(kind),
            onDecision: (d) => decisions.push(d),
          });
          try {
            const interceptors = hook === "client" ? [cancelGuardInterceptor({ guardian, self: CLIENT_CARD })] : [];
            if (hook === "server") server.use(guardCancelTasks(server.inner, { guardian }));
            const client = await sdkClient(server, version, interceptors);
            const task = await startTask(client, 1_000_000);
            await eventually(() => ((server.work.progress.get(task.id) ?? 0) > 0 || undefined), "work started");

            const cancel = cancelOf(client, task.id);
            if (policy === "allow") {
              assert.equal((await cancel).status?.state, 5, "fail-open: the task is canceled");
              assert.ok(server.work.returned.has(task.id), "and its work returned");
            } else if (hook === "client") {
              await assert.rejects(cancel, (error: unknown) => error instanceof CancelDeniedError && error.decision.source === "policy");
              assert.deepEqual(server.cancelsReceived, [], "fail-closed at the client: nothing sent");
            } else {
              await assert.rejects(cancel, /the AOS guard denied the cancel/);
              assert.equal(server.cancelsReceived.length, 1);
            }
            if (policy === "deny") {
              assert.equal((await client.getTask({ tenant: "", id: task.id })).status?.state, 2, "the task runs on");
              assert.ok(!server.work.returned.has(task.id));
            }
            assert.equal(decisions.length, 1, "one decision event");
            const [decision] = decisions;
            assert.equal(decision?.decision, policy);
            assert.equal(decision.source, "policy");
            assert.equal(decision.failure, FAILURE[kind]);
            assert.equal(decision.hook, hook);
            assert.deepEqual(decision.reasonCode, [`guardian-${FAILURE[kind]}`]);
            assert.match(decision.message, new RegExp(`fail policy ${policy}`));
            if (kind === "hang") assert.ok(decision.durationMs >= HANG_TIMEOUT_MS - 1, "it waited for the timeout");
            assert.equal(bad.hits, kind === "down" ? 0 : 1);
            for (const request of bad.requests) {
              const ask = aosRequest(request);
              assert.equal(ask.params.payload.params.id, task.id);
              const own = hook === "client" ? ask.params.context.from.agent : ask.params.context.to.agent;
              assert.ok(hook === "client" ? own.instructions !== undefined : Array.isArray(own.skills), "the full card");
            }
          } finally {
            guardian.close();
            await bad.close();
          }
        });
      }
    }
  }
});
