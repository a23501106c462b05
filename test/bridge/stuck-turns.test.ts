import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type BridgeProcess, closeBridge, isAlive, runCli, spawnBridge } from "../support/bridge-harness.js";
import { ConformanceTracker } from "../support/schema-validator.js";
import { eventually } from "../support/wire-assertions.js";
import {
  initialize,
  isRequest,
  type Message,
  newSession,
  openRawSession,
  pidFrom,
  prompt,
  RawPeer,
  sameId,
  sleep,
} from "../reliability/support.js";

const acpSchema = createRequire(import.meta.url)("@agentclientprotocol/sdk/schema/v1/schema.json") as object;
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema(acpSchema, "acp-v1");

/** Every answer the bridge wrote, to either side, validates against ACP v1's official schema. */
function assertAnswersValid(bridge: BridgeProcess): void {
  for (const [hop, definition] of [
    ["bridge->editor", "AgentResponse"],
    ["bridge->agent", "ClientResponse"],
  ] as const) {
    const validate = ajv.getSchema(`acp-v1#/$defs/${definition}`);
    assert.ok(validate, definition);
    for (const message of bridge.hop(hop).filter((m) => !("method" in m))) {
      assert.ok(validate(message), `${hop} ${JSON.stringify(message)}: ${ajv.errorsText(validate.errors)}`);
    }
  }
  // The generic response accepts any result (extension methods): check the ones we synthesise exactly.
  const exactly = (hop: "bridge->editor" | "bridge->agent", idPrefix: string, definition: string) => {
    const validate = ajv.getSchema(`acp-v1#/$defs/${definition}`);
    assert.ok(validate, definition);
    for (const m of bridge.hop(hop).filter((m) => "result" in m && String(m.id).startsWith(idPrefix))) {
      assert.ok(validate(m.result), `${definition} ${JSON.stringify(m)}: ${ajv.errorsText(validate.errors)}`);
    }
  };
  exactly("bridge->editor", "p", "PromptResponse");
  exactly("bridge->agent", "perm-", "RequestPermissionResponse");
}

interface StuckSetup {
  bridge: BridgeProcess;
  editor: RawPeer;
  sessionId: string;
}

/**
 * A bridge in front of a misbehaving agent, a raw editor on its stdio, and one open session;
 * runs `body` against them and closes the bridge however it ends.
 */
async function withStuckBridge(
  bridgeArgs: string[],
  fixture: string,
  agentArgs: string[],
  body: (setup: StuckSetup) => Promise<void>,
): Promise<void> {
  const bridge = spawnBridge(bridgeArgs, fixture, agentArgs);
  const editor = new RawPeer(bridge.input, bridge.child.stdin);
  try {
    const sessionId = await openRawSession(editor);
    await body({ bridge, editor, sessionId });
  } finally {
    await closeBridge(bridge);
  }
}

const sessionCancel = (sessionId: string) => ({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
const textOf = (m: Message) =>
  ((m.params as { update?: { content?: { text?: string } } } | undefined)?.update?.content?.text ?? "") as string;
const isUpdate = (m: Message) => m.method === "session/update";
const noted = (bridge: BridgeProcess, type: string) =>
  bridge.trace().filter((e) => e.note?.includes(`"type":"${type}"`));

/** Sends a prompt and waits until the agent has it. */
async function promptAtAgent(bridge: BridgeProcess, editor: RawPeer, id: string, sessionId: string, text: string) {
  editor.send(prompt(id, sessionId, text));
  await eventually(
    () => (bridge.hop("bridge->agent").some((m) => m.id === id) ? true : undefined),
    `${id} at the agent`,
  );
}

/** Every request the editor sent got exactly one answer; nothing it never asked was answered. */
function assertEachAnsweredOnce(editor: RawPeer, ids: string[]): void {
  for (const id of ids) assert.equal(editor.responsesTo(id).length, 1, `${id} answered once`);
  for (const answer of editor.received.filter((m) => !("method" in m)))
    assert.ok(ids.some((id) => sameId(id, answer.id)), `an answer to ${JSON.stringify(answer.id)}, never asked`);
}

/** Waits for a process to be gone (a wait, not a timed assertion). */
const gone = (pid: number, what: string) => eventually(() => (isAlive(pid) ? undefined : true), `${what} gone`);

const STREAMING_AGENTS = [
  { name: "raw-wire agent that ignores every cancel", fixture: "stuck-agent", args: ["--on-cancel", "ignore"] },
  { name: "raw-wire agent that rejects session/cancel with an error", fixture: "stuck-agent", args: ["--on-cancel", "reject"] },
  { name: "SDK agent that ignores every cancel", fixture: "stubborn-sdk-agent", args: [] },
  { name: "SDK agent whose session/cancel handler throws", fixture: "stubborn-sdk-agent", args: ["--reject-cancel"] },
];

describe("bridge: a Stop that always works, with agents that ignore it (real processes)", () => {
  for (const agent of STREAMING_AGENTS) {
    it(`${agent.name} and streams for 1.5 s: answered cancelled after the grace, no late update reaches the editor, the next prompt is held and then succeeds`, async () => {
      await withStuckBridge(
        ["--grace-ms", "150", "--log-level", "debug"],
        agent.fixture,
        agent.args,
        async ({ bridge, editor, sessionId }) => {
          await promptAtAgent(bridge, editor, "p1", sessionId, "stream");
          await eventually(() => editor.received.find(isUpdate), "the turn streaming");
          editor.send(sessionCancel(sessionId));
          const first = await editor.answer("p1");
          assert.deepEqual(first.result, { stopReason: "cancelled" });
          assert.equal(noted(bridge, "answered-for-peer").length, 1, "the bridge answered for the agent");
          const answeredAt = editor.received.indexOf(first);
          editor.send(prompt("p2", sessionId, "next"));
          const second = await editor.answer("p2");
          assert.deepEqual(second.result, { stopReason: "end_turn" }, "the next prompt succeeded (no 'busy')");
          // The agent's own turn really ended before the next prompt reached it.
          const hops = bridge.trace();
          const lateAnswer = hops.findIndex((e) => e.hop === "agent->bridge" && (e.message as Message).id === "p1");
          const forwarded = hops.findIndex((e) => e.hop === "bridge->agent" && (e.message as Message).id === "p2");
          assert.ok(lateAnswer !== -1 && lateAnswer < forwarded, "p2 went to the agent only after its late answer to p1");
          // After the answer, the editor saw only the new turn's updates.
          const after = editor.received.slice(answeredAt + 1).filter(isUpdate).map(textOf);
          assert.ok(after.length > 0, "the new turn's own updates arrived");
          for (const text of after) assert.match(text, /next/, `a late update of the old turn: ${text}`);
          const suppressed = noted(bridge, "late-update-suppressed").length;
          assert.ok(suppressed > 0, "late updates were suppressed and traced");
          const sent = bridge.hop("agent->bridge").filter(isUpdate).length;
          const shown = editor.received.filter(isUpdate).length;
          assert.equal(sent - shown, suppressed, "every update not shown is counted");
          assert.deepEqual(editor.requestsFrom("session/request_permission"), [], "the old turn's request never shown");
          if (agent.fixture === "stuck-agent") {
          // Its permission request (halfway through the stream) was answered cancelled by the bridge.
            const refused = bridge.hop("bridge->agent").find((m) => String(m.id).startsWith("perm-"));
            assert.deepEqual(refused?.result, { outcome: { outcome: "cancelled" } });
          }
          assert.ok(!editor.received.some((m) => m.id === null), "the agent's rejection never reaches the editor");
          assertEachAnsweredOnce(editor, ["init", "new", "p1", "p2"]);
          assertAnswersValid(bridge);
          await closeBridge(bridge);
          assert.match(
            bridge.stderr(),
            new RegExp(`turns that outlived the bridge's answer: 1, ${suppressed} late updates suppressed`),
            "the summary counts them",
          );
        });
    });
  }

  it("an agent that honours the cancel: no aftermath at all, the next prompt goes straight to the agent", async () => {
    await withStuckBridge(["--grace-ms", "2000"], "stuck-agent", ["--on-cancel", "honour"], async ({ bridge, editor, sessionId }) => {
      await promptAtAgent(bridge, editor, "p1", sessionId, "stream");
      await eventually(() => editor.received.find(isUpdate), "the turn streaming");
      editor.send(sessionCancel(sessionId));
      const first = await editor.answer("p1");
      assert.deepEqual(first.result, { stopReason: "cancelled" });
      assert.deepEqual(noted(bridge, "answered-for-peer"), [], "the agent answered itself");
      editor.send(prompt("p2", sessionId, "next"));
      assert.deepEqual((await editor.answer("p2")).result, { stopReason: "end_turn" });
      for (const type of ["turn-outlives-answer", "late-update-suppressed", "prompt-held", "turn-ended"])
        assert.deepEqual(noted(bridge, type), [], `no ${type}`);
      // p2 left for the agent in the same step it arrived: nothing in between on the bridge's hops.
      const hops = bridge.trace().filter((e) => e.hop !== undefined);
      const arrived = hops.findIndex((e) => e.hop === "editor->bridge" && (e.message as Message).id === "p2");
      assert.equal(hops[arrived + 1]?.hop, "bridge->agent");
      assert.equal((hops[arrived + 1]?.message as Message).id, "p2");
      assertEachAnsweredOnce(editor, ["init", "new", "p1", "p2"]);
    });
  });

  it("stuck in a tool (a shell that ignores SIGTERM), --on-stuck fail: the held prompt gets the clear error within the window", async () => {
    await withStuckBridge(
      ["--grace-ms", "100", "--turn-end-window-ms", "500"],
      "stuck-agent",
      [],
      async ({ bridge, editor, sessionId }) => {
        await promptAtAgent(bridge, editor, "p1", sessionId, "tool");
        const shell = await eventually(() => pidFrom(bridge.stderr(), "tool shell"), "the tool shell");
        editor.send(sessionCancel(sessionId));
        assert.deepEqual((await editor.answer("p1")).result, { stopReason: "cancelled" });
        editor.send(prompt("p2", sessionId, "next"));
        const refused = await editor.answer("p2");
        const error = refused.error as { code: number; message: string; data: Record<string, unknown> };
        assert.equal(error.code, -32010);
        assert.match(error.message, new RegExp(`Session ${sessionId} is stuck`));
        assert.match(error.message, /prompt "p1"/);
        assert.match(error.message, /\d+ ms after it was answered cancelled/);
        assert.equal(error.data.stuckPromptId, "p1");
        assert.ok((error.data.stuckForMs as number) >= 500, "named how long it has been stuck");
        const stuck = noted(bridge, "turn-stuck");
        assert.equal(stuck.length, 1);
        assert.match(stuck[0]?.note ?? "", /"verdict":"fail"/);
        assert.ok(!bridge.hop("bridge->agent").some((m) => m.id === "p2"), "the refused prompt never reached the agent");
        assert.ok(isAlive(shell), "fail kills nothing");
        assertEachAnsweredOnce(editor, ["init", "new", "p1", "p2"]);
        assertAnswersValid(bridge);
        await closeBridge(bridge);
        await gone(shell, "the shell (with the agent's group, on exit)");
      });
  });

  it("stuck in a tool, --on-stuck kill-tools: the shell is gone, the agent and its older helper live, the turn ends, the held prompt succeeds", async () => {
    await withStuckBridge(
      ["--grace-ms", "100", "--turn-end-window-ms", "300", "--kill-grace-ms", "200", "--on-stuck", "kill-tools"],
      "stuck-agent",
      ["--helper"],
      async ({ bridge, editor, sessionId }) => {
        const agentPid = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
        const helper = await eventually(() => pidFrom(bridge.stderr(), "helper"), "the helper's pid");
        // Start times have a 10 ms resolution: let the helper be clearly older than the turn.
        await sleep(200);
        await promptAtAgent(bridge, editor, "p1", sessionId, "tool");
        const shell = await eventually(() => pidFrom(bridge.stderr(), "tool shell"), "the tool shell");
        editor.send(sessionCancel(sessionId));
        assert.deepEqual((await editor.answer("p1")).result, { stopReason: "cancelled" });
        editor.send(prompt("p2", sessionId, "next"));
        const second = await editor.answer("p2");
        assert.deepEqual(second.result, { stopReason: "end_turn" });
        await gone(shell, "the tool shell");
        assert.ok(isAlive(agentPid), "the agent itself is never touched");
        // The note is written once the stopped are gone, which may come after the turn's end.
        const killed = await eventually(() => bridge.trace().find((e) => e.note?.startsWith("kill-tools:")), "the kill-tools note");
        assert.ok(isAlive(helper), `what the agent started before the turn is never touched: ${killed?.note}`);
        assert.ok(killed?.note?.includes(String(shell)), `the shell was among the stopped: ${killed?.note}`);
        assert.match(killed?.note ?? "", /SIGKILL \[.*\d/, "it ignored SIGTERM, so SIGKILL followed");
        assert.deepEqual(
          editor.received.filter(isUpdate).map(textOf).slice(-1),
          ["echo: next"],
          "the new turn's own update",
        );
        assertEachAnsweredOnce(editor, ["init", "new", "p1", "p2"]);
        assertAnswersValid(bridge);
      });
  });

  it("stuck in a tool, --on-stuck restart: a new agent process, the pending prompt answered with the reason, new sessions work", async () => {
    await withStuckBridge(
      ["--grace-ms", "100", "--turn-end-window-ms", "300", "--kill-grace-ms", "200", "--on-stuck", "restart"],
      "stuck-agent",
      [],
      async ({ bridge, editor, sessionId }) => {
        const oldAgent = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
        await promptAtAgent(bridge, editor, "p1", sessionId, "tool");
        const shell = await eventually(() => pidFrom(bridge.stderr(), "tool shell"), "the tool shell");
        editor.send({ jsonrpc: "2.0", id: "hang", method: "_test/hang", params: {} });
        editor.send(sessionCancel(sessionId));
        assert.deepEqual((await editor.answer("p1")).result, { stopReason: "cancelled" });
        editor.send(prompt("p2", sessionId, "next"));
        // Everything pending for the old agent is answered, naming why: the held prompt and the request it never answered.
        for (const id of ["p2", "hang"]) {
          const error = (await editor.answer(id)).error as { code: number; message: string };
          assert.equal(error.code, -32800, id);
          assert.match(error.message, /the agent was restarted/);
          assert.match(error.message, new RegExp(`session ${sessionId}'s cancelled turn was stuck for \\d+ ms`));
        }
        const newAgent = await eventually(() => {
          const pids = [...bridge.stderr().matchAll(/agent pid (\d+)/g)].map((m) => Number(m[1]));
          return pids.length >= 2 ? pids[1] : undefined;
        }, "a second agent");
        assert.notEqual(newAgent, oldAgent);
        await gone(oldAgent, "the old agent");
        await gone(shell, "the old agent's tool shell");
        assert.ok(isAlive(newAgent), "the new agent runs");
        // The new agent was initialised by the bridge (its answer kept from the editor); a new session works.
        editor.send({ jsonrpc: "2.0", id: "new2", method: "session/new", params: { cwd: "/", mcpServers: [] } });
        const fresh = ((await editor.answer("new2")).result as { sessionId: string }).sessionId;
        editor.send(prompt("p3", fresh, "again"));
        assert.deepEqual((await editor.answer("p3")).result, { stopReason: "end_turn" });
        assert.ok(!editor.received.some((m) => !isRequest(m) && typeof m.id === "string" && m.id.startsWith("acp-cancel/")));
        assertEachAnsweredOnce(editor, ["init", "new", "p1", "hang", "p2", "new2", "p3"]);
        assertAnswersValid(bridge);
      });
  });

  it("--on-stuck restart, an agent that asks for authenticate: the new agent gets the editor's initialize, then its authenticate once that is answered, then the editor's session/new", async () => {
    const bridge = spawnBridge(
      ["--grace-ms", "100", "--turn-end-window-ms", "300", "--kill-grace-ms", "200", "--on-stuck", "restart"],
      "stuck-agent",
      ["--auth"],
    );
    const editor = new RawPeer(bridge.input, bridge.child.stdin);
    try {
      editor.send(initialize("init"));
      await editor.answer("init");
      editor.send({ jsonrpc: "2.0", id: "auth-bad", method: "authenticate", params: { methodId: "nope" } });
      assert.ok("error" in (await editor.answer("auth-bad")), "a refused sign-in");
      editor.send({ jsonrpc: "2.0", id: "auth", method: "authenticate", params: { methodId: "key" } });
      assert.deepEqual((await editor.answer("auth")).result, {});
      editor.send(newSession("new"));
      const sessionId = ((await editor.answer("new")).result as { sessionId: string }).sessionId;
      await promptAtAgent(bridge, editor, "p1", sessionId, "tool");
      editor.send(sessionCancel(sessionId));
      assert.deepEqual((await editor.answer("p1")).result, { stopReason: "cancelled" });
      editor.send(prompt("p2", sessionId, "next"));
      assert.match(((await editor.answer("p2")).error as { message: string }).message, /the agent was restarted/);
      // Sent at once, before the new agent has answered its initialize: it must wait for the setup.
      editor.send(newSession("new2"));
      const fresh = ((await editor.answer("new2")).result as { sessionId: string } | undefined)?.sessionId;
      assert.ok(fresh !== undefined, JSON.stringify(editor.responsesTo("new2")));
      editor.send(prompt("p3", fresh, "again"));
      assert.deepEqual((await editor.answer("p3")).result, { stopReason: "end_turn" });
      const toAgent = bridge.hop("bridge->agent").filter((m) => typeof m.method === "string").map((m) => [m.id, m.method]);
      const restarted = toAgent.findIndex(([id]) => id === "acp-cancel/restart-1");
      assert.deepEqual(toAgent.slice(restarted, restarted + 3), [
        ["acp-cancel/restart-1", "initialize"],
        ["acp-cancel/restart-2", "authenticate"],
        ["new2", "session/new"],
      ]);
      assert.ok(!editor.received.some((m) => !isRequest(m) && typeof m.id === "string" && m.id.startsWith("acp-cancel/")));
      assertEachAnsweredOnce(editor, ["init", "auth-bad", "auth", "new", "p1", "p2", "new2", "p3"]);
      assertAnswersValid(bridge);
    } finally {
      await closeBridge(bridge);
    }
  });

  it("bad escalation flags exit 2 with a message naming the mistake", async () => {
    const cases: [string[], RegExp][] = [
      [["bridge", "--on-stuck", "pray", "--", "x"], /--on-stuck takes one of fail, kill-tools, restart, got 'pray'/],
      [["bridge", "--turn-end-window-ms", "soon", "--", "x"], /--turn-end-window-ms takes a whole number/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, message);
    }
  });
});

/** A v2 editor's session: initialize in the v2 draft's words, then session/new. */
async function openV2Session(editor: RawPeer): Promise<string> {
  editor.send({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: 2, info: { name: "raw-editor", version: "1.0.0" }, capabilities: {} },
  });
  const init = await editor.answer("init");
  assert.equal((init.result as { protocolVersion?: unknown }).protocolVersion, 2);
  editor.send({ jsonrpc: "2.0", id: "new", method: "session/new", params: { cwd: "/" } });
  return ((await editor.answer("new")).result as { sessionId: string }).sessionId;
}

async function v2StuckSetup(bridgeArgs: string[], agentArgs: string[] = []) {
  const bridge = spawnBridge(bridgeArgs, "stuck-agent", ["--v2", ...agentArgs]);
  const editor = new RawPeer(bridge.input, bridge.child.stdin);
  try {
    return { bridge, editor, sessionId: await openV2Session(editor) };
  } catch (error) {
    // The caller's finally is not reached yet: close the bridge here.
    await closeBridge(bridge);
    throw error;
  }
}

const stateOf = (m: Message) =>
  (m.params as { update?: { sessionUpdate?: string; state?: string; stopReason?: string } } | undefined)?.update;
const isIdle = (m: Message) => isUpdate(m) && stateOf(m)?.sessionUpdate === "state_update" && stateOf(m)?.state === "idle";

/** Every message on every hop of the bridge, not only what it synthesised, validates against ACP v2's schema. */
function assertWholeWireV2(bridge: BridgeProcess): void {
  const tracker = new ConformanceTracker("v2 stuck turn, every hop");
  for (const { hop, message } of bridge.trace()) {
    if (hop === undefined || message === undefined) continue;
    tracker.see(hop === "editor->bridge" || hop === "bridge->agent" ? "a" : "b", message);
  }
  assert.equal(tracker.firstProblem, undefined);
}

describe("bridge: a Stop that always works under the ACP v2 draft (the idle state_update is the turn's end)", () => {
  it("a raw-wire v2 agent ignores every cancel and streams for 1.5 s: the editor gets an idle after the grace and no update of that turn after it; the next prompt is held until the agent's own idle, then succeeds", async () => {
    const { bridge, editor, sessionId } = await v2StuckSetup(["--grace-ms", "150", "--log-level", "debug"]);
    try {
      await promptAtAgent(bridge, editor, "p1", sessionId, "stream");
      // v2: the prompt's answer is the insertion ack, the agent's own, before the turn ends.
      assert.ok(typeof ((await editor.answer("p1")).result as { messageId?: unknown }).messageId === "string");
      await eventually(() => editor.received.find((m) => isUpdate(m) && /chunk/.test(textOf(m))), "the turn streaming");
      editor.send(sessionCancel(sessionId));
      const givenUp = await eventually(() => editor.received.find(isIdle), "the bridge's idle for the cancelled work");
      assert.equal(stateOf(givenUp)?.stopReason, "cancelled");
      // The bridge notes it right after writing the idle: a loaded machine can show the idle first.
      await eventually(() => (noted(bridge, "turn-outlives-answer").length > 0 ? true : undefined), "the turn-outlives-answer note");
      assert.equal(noted(bridge, "turn-outlives-answer").length, 1, "the bridge gave up on the work for the agent");
      const givenUpAt = editor.received.indexOf(givenUp);
      editor.send(prompt("p2", sessionId, "next"));
      const second = await editor.answer("p2");
      assert.ok(!("error" in second), `the next prompt succeeded (no 'busy'): ${JSON.stringify(second)}`);
      const newTurnIdle = await eventually(
        () => editor.received.slice(editor.received.indexOf(second)).find(isIdle),
        "the new turn's idle",
      );
      assert.equal(stateOf(newTurnIdle)?.stopReason, "end_turn");
      // The agent's own idle for the old turn came before the next prompt reached it, and was its end.
      const hops = bridge.trace();
      const agentIdle = hops.findIndex((e) => e.hop === "agent->bridge" && isIdle(e.message as Message));
      const forwarded = hops.findIndex((e) => e.hop === "bridge->agent" && (e.message as Message).id === "p2");
      assert.ok(agentIdle !== -1 && agentIdle < forwarded, "p2 went to the agent only after the agent's idle for p1's work");
      const ended = noted(bridge, "turn-ended");
      assert.equal(ended.length, 1);
      assert.match(ended[0]?.note ?? "", /the idle state_update/);
      // After the bridge's idle, the editor saw only the new turn: nothing before p2's answer, chunks of "next".
      const after = editor.received.slice(givenUpAt + 1);
      const answeredAt = after.indexOf(second);
      assert.deepEqual(after.slice(0, answeredAt).filter(isUpdate), [], "no update of the old turn after its idle");
      for (const m of after.filter((m) => isUpdate(m) && stateOf(m)?.sessionUpdate !== "state_update"))
        assert.match(textOf(m), /next/, `a late update of the old turn: ${textOf(m)}`);
      assert.equal(editor.received.filter(isIdle).length, 2, "one idle per turn: the bridge's, then the new turn's");
      const suppressed = noted(bridge, "late-update-suppressed").length;
      assert.ok(suppressed > 0, "late updates were suppressed and traced");
      // Not shown: the suppressed ones and the agent's own idle (its end); shown in its place: the bridge's idle.
      const sent = bridge.hop("agent->bridge").filter(isUpdate).length;
      assert.equal(sent - editor.received.filter(isUpdate).length, suppressed, "every update not shown is counted");
      // The old turn's permission request never reached the editor; the agent got v2's cancelled outcome.
      assert.deepEqual(editor.requestsFrom("session/request_permission"), []);
      const refused = bridge.hop("bridge->agent").find((m) => String(m.id).startsWith("perm-"));
      assert.deepEqual(refused?.result, { outcome: { outcome: "cancelled" } });
      assertEachAnsweredOnce(editor, ["init", "new", "p1", "p2"]);
      assertWholeWireV2(bridge);
    } finally {
      await closeBridge(bridge);
    }
  });

  it("a v2 agent stuck in a tool, --on-stuck fail: the bridge's idle after the grace, then the held prompt gets the clear error within the window", async () => {
    const { bridge, editor, sessionId } = await v2StuckSetup(["--grace-ms", "100", "--turn-end-window-ms", "500"]);
    try {
      await promptAtAgent(bridge, editor, "p1", sessionId, "tool");
      const shell = await eventually(() => pidFrom(bridge.stderr(), "tool shell"), "the tool shell");
      await editor.answer("p1");
      editor.send(sessionCancel(sessionId));
      const givenUp = await eventually(() => editor.received.find(isIdle), "the bridge's idle");
      assert.equal(stateOf(givenUp)?.stopReason, "cancelled");
      editor.send(prompt("p2", sessionId, "next"));
      const refused = await editor.answer("p2");
      const error = refused.error as { code: number; message: string; data: Record<string, unknown> };
      assert.equal(error.code, -32010);
      assert.match(error.message, new RegExp(`Session ${sessionId} is stuck`));
      assert.match(error.message, /prompt "p1"/);
      assert.equal(error.data.stuckPromptId, "p1");
      assert.ok((error.data.stuckForMs as number) >= 500, "named how long it has been stuck");
      assert.match(noted(bridge, "turn-stuck")[0]?.note ?? "", /"verdict":"fail"/);
      assert.ok(!bridge.hop("bridge->agent").some((m) => m.id === "p2"), "the refused prompt never reached the agent");
      assert.ok(isAlive(shell), "fail kills nothing");
      assertEachAnsweredOnce(editor, ["init", "new", "p1", "p2"]);
      assertWholeWireV2(bridge);
      await closeBridge(bridge);
      await gone(shell, "the shell (with the agent's group, on exit)");
    } finally {
      await closeBridge(bridge);
    }
  });
});
