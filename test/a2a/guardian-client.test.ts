import assert from "node:assert/strict";
import { type GuardDecision, GuardianClient, GuardInputError } from "../../src/a2a/index.js";
import type { A2aCancelMessage } from "../../src/a2a/aos.js";
import { cancelMessage } from "../../src/a2a/cancel-payload.js";
import type { GuardQuestion } from "../../src/a2a/guardian-client.js";
import { CLIENT_CARD } from "./a2a-clients.js";
import { aosRequest } from "./aos-shape.js";
import { badGuardian, recordingGuardian, scriptedGuardian } from "./guardians.js";

const question = (payload: A2aCancelMessage = cancelMessage("0.3", { id: "task-1" }, 1)): GuardQuestion => ({
  hook: "client",
  payload,
  reasoning: "no longer needed",
  from: CLIENT_CARD,
  to: { name: "Story teller", url: "http://127.0.0.1:1/a2a", version: "1.0.0" },
});

describe("GuardianClient (AOS JSON-RPC 2.0 over HTTP), against guardians on loopback", () => {
  it("asks the reference guardian in the seed's shape and returns its decision as an event", async () => {
    const g = await recordingGuardian({ default: "deny", rules: [{ decision: "allow", taskId: "^task-" }] });
    const events: GuardDecision[] = [];
    const client = new GuardianClient({ url: g.url, onDecision: (d) => events.push(d) });
    try {
      const allowed = await client.check(question());
      const denied = await client.check(question(cancelMessage("1.0", { id: "other", tenant: "t1" }, 2)));
      assert.equal(allowed.decision, "allow");
      assert.equal(allowed.source, "guardian");
      assert.equal(denied.decision, "deny");
      assert.deepEqual(denied.reasonCode, ["default"]);
      assert.deepEqual(events, [allowed, denied]);
      const [first, second] = g.requests.map(aosRequest);
      assert.deepEqual(first?.params.payload, { jsonrpc: "2.0", id: 1, method: "tasks/cancel", params: { id: "task-1", metadata: {} } });
      assert.deepEqual(second?.params.payload, {
        jsonrpc: "2.0",
        id: 2,
        method: "CancelTask",
        params: { id: "other", metadata: {}, tenant: "t1" },
      });
      assert.equal(first.params.reasoning, "no longer needed");
      assert.notEqual(first.id, second.id);
    } finally {
      client.close();
      await g.close();
    }
  });

  it("ping returns the guardian's status, version and time; a guardian that is down rejects", async () => {
    const g = await recordingGuardian({ default: "allow" });
    const up = new GuardianClient({ url: g.url });
    const bad = await badGuardian("down");
    const down = new GuardianClient({ url: bad.url });
    try {
      const pong = await up.ping();
      assert.equal(pong.status, "ok");
      assert.ok(!Number.isNaN(Date.parse(pong.timestamp)));
      await assert.rejects(down.ping());
    } finally {
      up.close();
      down.close();
      await g.close();
    }
  });

  const answers: [string, (r: { id: string }) => unknown, Partial<GuardDecision>][] = [
    [
      "modify (undefined for a cancel) is a deny by the guardian",
      (r) => ({ jsonrpc: "2.0", id: r.id, result: { decision: "modify", message: "change it" } }),
      { decision: "deny", source: "guardian", guardianDecision: "modify", message: "change it" },
    ],
    [
      "an unknown decision is an invalid answer: the fail policy decides",
      (r) => ({ jsonrpc: "2.0", id: r.id, result: { decision: "perhaps" } }),
      { decision: "allow", source: "policy", failure: "invalid-answer", guardianDecision: "perhaps" },
    ],
    [
      "an answer to another id is an invalid answer",
      () => ({ jsonrpc: "2.0", id: "someone-else", result: { decision: "deny" } }),
      { decision: "allow", source: "policy", failure: "invalid-answer" },
    ],
    [
      "a result without a decision is an invalid answer",
      (r) => ({ jsonrpc: "2.0", id: r.id, result: { status: "ok" } }),
      { decision: "allow", source: "policy", failure: "invalid-answer" },
    ],
    [
      "an answer longer than maxResponseBytes is an invalid answer",
      (r) => ({ jsonrpc: "2.0", id: r.id, result: { decision: "deny", message: "x".repeat(5000) } }),
      { decision: "allow", source: "policy", failure: "invalid-answer" },
    ],
  ];
  for (const [title, answer, expected] of answers) {
    it(title, async () => {
      const g = await scriptedGuardian(answer);
      const client = new GuardianClient({ url: g.url, failPolicy: "allow", maxResponseBytes: 1024 });
      try {
        const decision = await client.check(question());
        for (const [key, value] of Object.entries(expected)) {
          assert.deepEqual(decision[key as keyof GuardDecision], value, key);
        }
      } finally {
        client.close();
        await g.close();
      }
    });
  }

  it("an HTTP error status without a JSON-RPC body is an invalid answer", async () => {
    const g = await scriptedGuardian(() => "", 503);
    const client = new GuardianClient({ url: g.url });
    try {
      const decision = await client.check(question());
      assert.equal(decision.decision, "deny");
      assert.equal(decision.failure, "invalid-answer");
      assert.match(decision.message, /HTTP 503/);
    } finally {
      client.close();
      await g.close();
    }
  });

  it("keeps the order of fields in the question it sends and in the decision it records", async () => {
    const answers = [
      { decision: "deny", message: "no", reasoning: "busy", reasonCode: ["a", 2] },
      { decision: "modify", reasonCode: [] },
      { decision: "maybe" },
    ];
    let next = 0;
    const g = await scriptedGuardian((r) => ({ jsonrpc: "2.0", id: r.id, result: answers[next++] }));
    const client = new GuardianClient({ url: g.url });
    try {
      const keys = async () => Object.keys(await client.check(question()));
      assert.deepEqual(await keys(), [
        "hook", "taskId", "requestId", "decision", "source", "message", "reasonCode", "reasoning", "durationMs", "at",
      ]);
      assert.deepEqual(await keys(), [
        "hook", "taskId", "requestId", "decision", "source", "guardianDecision", "message", "reasonCode", "durationMs", "at",
      ]);
      assert.deepEqual(await keys(), [
        "hook", "taskId", "requestId", "decision", "source", "failure", "guardianDecision", "message", "reasonCode",
        "durationMs", "at",
      ]);
      const sent = g.requests[0] as { params: Record<string, unknown> };
      assert.deepEqual(Object.keys(sent.params), ["payload", "reasoning", "context"]);
    } finally {
      client.close();
      await g.close();
    }
  });

  it("an audit listener that throws does not change the decision", async () => {
    const g = await recordingGuardian({ default: "allow" });
    const client = new GuardianClient({ url: g.url });
    client.onDecision(() => {
      throw new Error("audit log full");
    });
    try {
      assert.equal((await client.check(question())).decision, "allow");
    } finally {
      client.close();
      await g.close();
    }
  });

  describe("bad input: a GuardInputError naming the problem, and the guardian is not asked", () => {
    const bad: [string, GuardQuestion, RegExp][] = [
      ["an empty task id", question(cancelMessage("0.3", { id: "" }, 1)), /task id/],
      ["a task id that is not a string", question({ ...cancelMessage("0.3", { id: "x" }, 1), params: { id: 7 as never } }), /task id/],
      ["metadata that is not an object", question(cancelMessage("0.3", { id: "x", metadata: [] as never }, 1)), /metadata/],
      ["a payload that is not a cancel", question({ ...cancelMessage("0.3", { id: "x" }, 1), method: "tasks/get" as never }), /payload/],
      ["an agent card without a name", { ...question(), from: { name: "" } }, /from's agent card needs a name/],
      ["no target card", { ...question(), to: undefined as never }, /to needs an agent card/],
      ["reasoning that is not a string", { ...question(), reasoning: 42 as never }, /reasoning/],
      ["an unknown hook", { ...question(), hook: "middle" as never }, /unknown hook/],
    ];
    for (const [what, q, message] of bad) {
      it(what, async () => {
        const g = await recordingGuardian({ default: "allow" });
        const events: GuardDecision[] = [];
        const client = new GuardianClient({ url: g.url, onDecision: (d) => events.push(d) });
        try {
          await assert.rejects(client.check(q), (error: unknown) => {
            assert.ok(error instanceof GuardInputError);
            assert.match(error.message, message);
            return true;
          });
          assert.equal(g.requests.length, 0);
          assert.equal(events.length, 0);
        } finally {
          client.close();
          await g.close();
        }
      });
    }

    it("options: a non-HTTP URL, an unknown fail policy, a timeout that is not positive", () => {
      assert.throws(() => new GuardianClient({ url: "ftp://127.0.0.1/" }), /http: or https:/);
      assert.throws(() => new GuardianClient({ url: "http://127.0.0.1/", failPolicy: "maybe" as never }), /failPolicy/);
      assert.throws(() => new GuardianClient({ url: "http://127.0.0.1/", timeoutMs: 0 }), /timeoutMs/);
      assert.throws(() => new GuardianClient({ url: "not a url" }));
    });
  });
});
