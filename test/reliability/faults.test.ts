/**
 * Faults with real processes: the agent SIGKILLed at random points of a turn, the editor closing
 * its input mid-turn, peers that never answer, an agent that writes after it was told to exit.
 * The editor is a raw ndjson peer that counts every answer per id.
 *
 * Random loops print their seed; ACP_CANCEL_SEED=<seed> replays one.
 */
import assert from "node:assert/strict";
import type { TraceEntry } from "../../src/bridge/trace-writer.js";
import { CAPABILITY_KEY, OUR_CAPABILITY } from "../../src/acp/index.js";
import { type BridgeProcess, closeBridge, isAlive, spawnBridge } from "../support/bridge-harness.js";
import { eventually } from "../support/wire-assertions.js";
import {
  cancelRequest,
  exitOf,
  faultSeed,
  figure,
  isRequest,
  isResponse,
  type Message,
  openRawSession,
  pidFrom,
  prompt,
  killLeftovers,
  RawPeer,
  random,
  scaled,
  sleep,
  track,
} from "./support.js";

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** What the editor answers to a request from the agent. */
function editorAnswer(request: Message): Message {
  if (request.method === "session/request_permission")
    return { jsonrpc: "2.0", id: request.id, result: { outcome: { outcome: "selected", optionId: "allow" } } };
  if (request.method === "fs/read_text_file") return { jsonrpc: "2.0", id: request.id, result: { content: "text" } };
  return { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "Method not found" } };
}

/** The ids of the requests one side sent, and how often each was answered, from the trace. */
function answeredPerRequest(trace: TraceEntry[], requests: string, answers: string): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  for (const entry of trace) {
    const message = entry.message as Message | undefined;
    if (message === undefined) continue;
    if (entry.hop === requests && isRequest(message)) counts.set(message.id, counts.get(message.id) ?? 0);
    if (entry.hop === answers && isResponse(message) && counts.has(message.id))
      counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
  }
  return counts;
}

/** Waits until `pid` is gone (the bridge kills the agent's group after the agent exits). */
async function gone(pid: number, what: string): Promise<void> {
  await eventually(() => (isAlive(pid) ? undefined : true), `${what} (pid ${pid}) gone`, 5000);
}

async function pidsOf(bridge: BridgeProcess): Promise<{ agent: number; grandchild: number }> {
  const agent = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
  const grandchild = await eventually(() => pidFrom(bridge.stderr(), "grandchild"), "the grandchild's pid");
  return { agent, grandchild };
}

describe("reliability: faults with real processes", function () {
  this.timeout(0);
  afterEach(killLeftovers);

  it(`the agent SIGKILLed at random points of a turn: every editor request the bridge read is answered exactly once, exit 137, no orphans (${scaled(5, 200)} kills)`, async () => {
    const seed = faultSeed();
    const rng = random(seed);
    const runs = scaled(5, 200);
    const outcomes = { killedBeforeSession: 0, killedMidTurn: 0, answeredByAgent: 0, answeredForKill: 0 };
    for (let run = 0; run < runs; run++) {
      const embedded = rng() < 0.5;
      const where = `run ${run} (seed ${seed}, ${embedded ? "embedded" : "bare"} agent)`;
      const bridge = track(spawnBridge(["--grace-ms", "200"], "sdk-agent", [
        ...(embedded ? [] : ["--bare"]),
        "--grandchild",
      ]));
      const peer = new RawPeer(bridge.input, bridge.child.stdin);
      peer.answerRequests((request) => {
        // The editor answers the agent's questions after a while, or never.
        if (rng() < 0.2) return undefined;
        setTimeout(() => peer.send(editorAnswer(request)), rng() * 60);
        return undefined;
      });
      const pids = await pidsOf(bridge);
      const sent: unknown[] = [];
      const send = (message: Message) => {
        sent.push(message.id);
        peer.send(message);
      };
      const early = rng() < 0.15;
      if (early) {
        // Killed during the handshake.
        send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
        send({ jsonrpc: "2.0", id: "early-echo", method: "_test/echo", params: {} });
        outcomes.killedBeforeSession++;
      } else {
        sent.push("init", "new");
        const sessionId = await openRawSession(peer);
        send(prompt("turn", sessionId, rng() < 0.7 ? "nested" : "ignore-cancel"));
        send({ jsonrpc: "2.0", id: "slow", method: "_test/slow", params: {} });
        send({ jsonrpc: "2.0", id: "echo", method: "_test/echo", params: {} });
        if (rng() < 0.3) peer.send(cancelRequest("slow"));
        if (rng() < 0.3) setTimeout(() => peer.send(cancelRequest("turn")), rng() * 100);
        if (rng() < 0.2)
          setTimeout(() => peer.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } }), rng() * 100);
        outcomes.killedMidTurn++;
      }
      // Everything was read by the bridge before the kill: only the agent's side is at a random point.
      await eventually(
        () => (sent.every((id) => bridge.hop("editor->bridge").some((m) => m.id === id)) ? true : undefined),
        `${where}: the bridge read every request`,
      );
      await sleep(rng() * 150);
      process.kill(pids.agent, "SIGKILL");
      const exit: Exit = await exitOf(bridge.child, bridge.exited);
      assert.equal(exit.code, 137, `${where}: exit status\n${bridge.stderr().slice(-1500)}`);
      await eventually(() => (peer.ended ? true : undefined), `${where}: the bridge's stdout ends`);
      for (const id of sent) {
        const answers = peer.responsesTo(id);
        assert.equal(answers.length, 1, `${where}: ${String(id)} answered ${answers.length} times`);
        const error = answers[0]?.error as { code: number; message: string } | undefined;
        if (error?.message.includes("agent was killed by SIGKILL")) {
          // A crash, not a cancel (docs/decisions.md, "Bridge: an agent that ends on its own").
          assert.equal(error.code, -32603, where);
          outcomes.answeredForKill++;
        } else outcomes.answeredByAgent++;
      }
      assert.deepEqual(peer.garbage, [], where);
      // Nothing the editor never asked for is answered.
      for (const m of peer.received.filter(isResponse))
        assert.ok(sent.includes(m.id), `${where}: an answer to ${String(m.id)}, never asked`);
      // No orphans: the agent and what it started are gone.
      await gone(pids.agent, `${where}: the agent`);
      await gone(pids.grandchild, `${where}: the grandchild`);
    }
    figure(
      `SIGKILL faults: ${runs} kills (seed ${seed}): ${outcomes.killedBeforeSession} during the handshake, ` +
      `${outcomes.killedMidTurn} mid-turn; ${outcomes.answeredByAgent} requests answered by the agent, ` +
      `${outcomes.answeredForKill} answered for the kill, each exactly once; orphans: 0; violations: 0`,
    );
  });

  it(`the editor closes its input mid-turn: everything in flight is cancelled and every agent request answered once, exit 0, no orphans (${scaled(3, 50)} runs)`, async () => {
    const seed = faultSeed();
    const rng = random(seed);
    const runs = scaled(3, 50);
    let cancelled = 0;
    for (let run = 0; run < runs; run++) {
      const embedded = rng() < 0.5;
      const where = `run ${run} (seed ${seed}, ${embedded ? "embedded" : "bare"} agent)`;
      const bridge = track(spawnBridge(["--exit-grace-ms", "300", "--kill-grace-ms", "300"], "sdk-agent", [
        ...(embedded ? [] : ["--bare"]),
        "--grandchild",
      ]));
      const peer = new RawPeer(bridge.input, bridge.child.stdin);
      const editorAnswers = rng() < 0.5;
      peer.answerRequests((request) => {
        if (editorAnswers) setTimeout(() => peer.send(editorAnswer(request)), rng() * 80);
        return undefined;
      });
      const pids = await pidsOf(bridge);
      const sessionId = await openRawSession(peer);
      peer.send(prompt("turn", sessionId, "nested"));
      peer.send({ jsonrpc: "2.0", id: "slow", method: "_test/slow", params: {} });
      await sleep(rng() * 150);
      const receivedAtEof = peer.received.length;
      peer.end();
      const exit: Exit = await exitOf(bridge.child, bridge.exited);
      assert.equal(exit.code, 0, `${where}\n${bridge.stderr().slice(-1500)}`);
      const trace = bridge.trace();
      const shutdownAt = trace.findIndex((e) => e.note?.startsWith("shutdown: the editor closed its input"));
      assert.ok(shutdownAt !== -1, `${where}: shutdown noted`);
      // After its EOF the editor gets only the answers it was still owed, -32800 naming the shutdown, once each
      // (decisions.md, "Bridge: pending requests at shutdown").
      const late = trace.slice(shutdownAt).filter((e) => e.hop === "bridge->editor").map((e) => e.message as Message);
      for (const answer of late) {
        assert.ok(isResponse(answer) && (answer.error as { code?: number } | undefined)?.code === -32800, `${where}: after EOF: ${JSON.stringify(answer)}`);
      }
      assert.equal(new Set(late.map((m) => m.id)).size, late.length, `${where}: answered twice after EOF`);
      assert.ok(peer.received.length >= receivedAtEof);
      // Every request of the agent is answered exactly once (by the editor, or for it at EOF).
      for (const [id, count] of answeredPerRequest(trace, "agent->bridge", "bridge->agent"))
        assert.equal(count, 1, `${where}: agent request ${String(id)} answered ${count} times`);
      // Every editor request still unanswered at EOF was cancelled toward the agent: $/cancel_request,
      // or for a prompt (v1) session/cancel for its session (decisions.md, "Capability").
      const editorAnswered = new Set(
        trace
          .slice(0, shutdownAt)
          .filter((e) => e.hop === "bridge->editor" && isResponse(e.message as Message))
          .map((e) => (e.message as Message).id),
      );
      const cancelsToAgent = new Set(
        trace
          .filter((e) => e.hop === "bridge->agent" && (e.message as Message).method === "$/cancel_request")
          .map((e) => ((e.message as Message).params as { requestId: unknown }).requestId),
      );
      const sessionsCancelled = new Set(
        trace
          .filter((e) => e.hop === "bridge->agent" && (e.message as Message).method === "session/cancel")
          .map((e) => ((e.message as Message).params as { sessionId: unknown }).sessionId),
      );
      for (const entry of trace.slice(0, shutdownAt)) {
        const message = entry.message as Message | undefined;
        if (entry.hop !== "editor->bridge" || message === undefined || !isRequest(message)) continue;
        if (editorAnswered.has(message.id)) continue;
        const promptOf = message.method === "session/prompt" ? (message.params as { sessionId: unknown }).sessionId : undefined;
        const told = cancelsToAgent.has(message.id) || (promptOf !== undefined && sessionsCancelled.has(promptOf));
        assert.ok(told, `${where}: ${String(message.id)} was not cancelled at EOF`);
        assert.equal(late.filter((m) => m.id === message.id).length, 1, `${where}: ${String(message.id)} answered after EOF`);
        cancelled++;
      }
      await gone(pids.agent, `${where}: the agent`);
      await gone(pids.grandchild, `${where}: the grandchild`);
    }
    figure(`editor EOF mid-turn: ${runs} runs (seed ${seed}), ${cancelled} in-flight requests cancelled; orphans: 0; violations: 0`);
  });

  it("an agent that never answers a cancelled turn: the editor is answered 'cancelled' after grace, once; the late reply is dropped; the session goes on", async () => {
    for (let run = 0; run < scaled(1, 10); run++) {
      const bridge = track(spawnBridge(["--grace-ms", "150"], "legacy-agent", ["--ignore-session-cancel", "--work-ms", "500"]));
      const peer = new RawPeer(bridge.input, bridge.child.stdin);
      try {
        const sessionId = await openRawSession(peer);
        peer.send(prompt("turn", sessionId, "work"));
        await eventually(
          () => (bridge.hop("bridge->agent").some((m) => m.id === "turn") ? true : undefined),
          "the turn at the agent",
        );
        peer.send(cancelRequest("turn"));
        const answer = await peer.answer("turn");
        assert.deepEqual(answer.result, { stopReason: "cancelled" });
        // The agent's own end_turn comes at ~500 ms, long after grace: dropped.
        await eventually(
          () => (bridge.hop("agent->bridge").some((m) => m.id === "turn") ? true : undefined),
          "the agent's late reply",
        );
        // Noted as the bridge handles it, just after tracing the read: wait for the note itself.
        await eventually(
          () => (bridge.trace().some((e) => e.note?.includes('"type":"late-reply-dropped"')) ? true : undefined),
          "the late reply dropped",
        );
        peer.send(prompt("again", sessionId, "hello"));
        assert.deepEqual((await peer.answer("again")).result, { stopReason: "end_turn" });
        // The agent answered "again" after its late reply, and the bridge relays in order: a relayed
        // duplicate would have reached the editor before this answer (no sleep needed to see it).
        assert.equal(peer.responsesTo("turn").length, 1, "answered exactly once");
      } finally {
        await closeBridge(bridge);
      }
    }
  });

  it("an editor that never answers the agent's requests: after session/cancel the permission is answered 'cancelled' at once, the read -32800 after grace, the turn ends cancelled; late answers dropped", async () => {
    for (let run = 0; run < scaled(1, 10); run++) {
      const bridge = track(spawnBridge(["--grace-ms", "150"], "sdk-agent", ["--bare"]));
      const peer = new RawPeer(bridge.input, bridge.child.stdin);
      try {
        // The editor advertises the capability: the bridge trusts it to answer, and waits grace.
        const sessionId = await openRawSession(peer, { _meta: { [CAPABILITY_KEY]: OUR_CAPABILITY } });
        peer.send(prompt("turn", sessionId, "nested"));
        const [permission, read] = await eventually(() => {
          const asked = peer.requestsFrom();
          const p = asked.find((m) => m.method === "session/request_permission");
          const r = asked.find((m) => m.method === "fs/read_text_file");
          return p && r ? [p, r] : undefined;
        }, "both nested requests");
        peer.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
        const answer = await peer.answer("turn");
        assert.deepEqual(answer.result, { stopReason: "cancelled" });
        assert.equal(peer.responsesTo("turn").length, 1);
        const toAgent = bridge.hop("bridge->agent").filter(isResponse);
        const permissionAnswers = toAgent.filter((m) => m.id === permission?.id);
        const readAnswers = toAgent.filter((m) => m.id === read?.id);
        assert.deepEqual(permissionAnswers.map((m) => m.result), [{ outcome: { outcome: "cancelled" } }]);
        assert.deepEqual(
          readAnswers.map((m) => (m.error as { code: number }).code),
          [-32800],
        );
        // The editor wakes up and answers both: the late answers are dropped, not relayed.
        peer.send(editorAnswer(permission as Message));
        peer.send(editorAnswer(read as Message));
        peer.send(prompt("again", sessionId, "hello"));
        assert.deepEqual((await peer.answer("again")).result, { stopReason: "end_turn" });
        const relayed = bridge.hop("bridge->agent").filter((m) => isResponse(m));
        assert.equal(relayed.filter((m) => m.id === permission?.id).length, 1, "the permission answered once");
        assert.equal(relayed.filter((m) => m.id === read?.id).length, 1, "the read answered once");
      } finally {
        await closeBridge(bridge);
      }
    }
  });

  for (const editorStopsReading of [false, true]) {
    it(`an agent that writes after it was told to exit${editorStopsReading ? ", with the editor's end of stdout closed" : ""}: the bridge neither crashes nor forwards anything, and exits 0`, async () => {
      const bridge = track(spawnBridge([], "flood-agent", ["--write-after-eof"]));
      const peer = new RawPeer(bridge.input, bridge.child.stdin);
      const sessionId = await openRawSession(peer);
      peer.send(prompt("turn", sessionId, "hello"));
      await peer.answer("turn");
      const before = peer.received.length;
      if (editorStopsReading) await peer.close();
      peer.end();
      const exit: Exit = await exitOf(bridge.child, bridge.exited);
      assert.equal(exit.code, 0, bridge.stderr().slice(-1500));
      assert.match(bridge.stderr(), /agent wrote after eof/);
      assert.doesNotMatch(bridge.stderr(), /TypeError|RangeError|Unhandled|ERR_|at .*\.js:\d+/);
      const trace = bridge.trace();
      const shutdownAt = trace.findIndex((e) => e.note?.startsWith("shutdown: the editor closed its input"));
      assert.ok(shutdownAt !== -1);
      // The agent's last words were read (and logged), never relayed to the gone editor.
      assert.ok(trace.slice(shutdownAt).some((e) => e.hop === "agent->bridge"), "the bridge read them");
      assert.deepEqual(
        trace.slice(shutdownAt).filter((e) => e.hop === "bridge->editor"),
        [],
      );
      // The bridge's exit can be seen before its stdout's end is read: wait for that end, so that
      // everything it wrote is counted.
      if (!editorStopsReading) await eventually(() => (peer.ended ? true : undefined), "the bridge's stdout ends");
      assert.equal(peer.received.length, before, "nothing reached the editor after its EOF");
      assert.deepEqual(peer.garbage, []);
    });
  }
});
