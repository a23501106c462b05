/**
 * The interop matrix, agent side: scenario × third-party agent × placement (direct, bridge). A raw
 * client records every line; each cell asserts on the wire (one answer per request, `cancelled`
 * where due) and that no process carrying the cell's marker is left. Findings: docs/interop.md.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  killAll,
  type Message,
  ModelHole,
  type Placement,
  processesWith,
  sealedEnv,
  until,
  WireClient,
  within,
} from "./harness.js";
import { AGENT_PEERS, type AgentPeer, PEERS_INSTALLED, PEERS_NOTE, RUN_SLOW, SLOW_NOTE } from "./peers.js";

const GRACE_MS = 2000;
const BRIDGE_ARGS = ["--exit-grace-ms", "500", "--kill-grace-ms", "500"];

interface Cell {
  client: WireClient;
  hole: ModelHole;
  marker: string;
  home: string;
}

async function open(peer: AgentPeer, placement: Placement, bridgeArgs: string[] = []): Promise<Cell> {
  const hole = await new ModelHole().open();
  const { env, home, marker } = sealedEnv(hole);
  const agent = placement === "embedded" ? peer.embedded : peer.agent;
  assert.ok(agent !== undefined, `${peer.name} has no embedded placement`);
  const client = new WireClient(placement, agent, env, home, [...BRIDGE_ARGS, ...bridgeArgs]);
  return { client, hole, marker, home };
}

/** initialize (+ authenticate) + session/new; returns the session id and what a comparison needs. */
async function session(peer: AgentPeer, cell: Cell) {
  const { client, home } = cell;
  const init = await client.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  }).answer;
  assert.ok("result" in init, `initialize: ${JSON.stringify(init)}`);
  if (peer.auth !== undefined) {
    const auth = await client.request("authenticate", { methodId: peer.auth }).answer;
    assert.ok("result" in auth, `authenticate: ${JSON.stringify(auth)}`);
  }
  const created = await client.request("session/new", { cwd: home, mcpServers: [] }).answer;
  const sessionId = (created.result as { sessionId?: unknown } | undefined)?.sessionId;
  assert.equal(typeof sessionId, "string", `session/new: ${JSON.stringify(created).slice(0, 300)}`);
  return { sessionId: sessionId as string, init: init.result as Message };
}

function prompt(client: WireClient, sessionId: string, text: string) {
  return client.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
}

/** Ends the cell: stdin closed, the placement's exit awaited (the client kills a direct peer that stays). */
async function close(cell: Cell): Promise<{ code: number | null; signal: NodeJS.Signals | null; stayed: boolean }> {
  const { client } = cell;
  client.child.stdin.end();
  let exit = await within(client.exited, 3000);
  const stayed = exit === undefined;
  if (exit === undefined) {
    // Killing the agent's pid alone leaves claude-agent-acp's child running: stop the group.
    client.signal("SIGTERM");
    exit = (await within(client.exited, 3000)) ?? { code: null, signal: "SIGKILL" };
  }
  await until(() => (processesWith(cell.marker).length === 0 ? true : undefined), "no process of the cell left", 8000)
    .catch(() => undefined);
  const left = processesWith(cell.marker);
  killAll(cell.marker);
  await cell.hole.close();
  assert.deepEqual(left, [], "no orphan process");
  return { ...exit, stayed };
}

function stopReasonOf(answer: Message | undefined): unknown {
  return (answer?.result as { stopReason?: unknown } | undefined)?.stopReason;
}

/** The bridge's agent-side lines (from its trace). */
function agentSide(client: WireClient, hop: "bridge->agent" | "agent->bridge"): Message[] {
  return client.trace().filter((e) => e.hop === hop && e.message !== undefined).map((e) => e.message as Message);
}

for (const peer of AGENT_PEERS) {
  describe(`interop: ${peer.name}`, function () {
    this.timeout(60_000);
    const placements: Placement[] = ["direct", "bridge", ...(peer.embedded === undefined ? [] : ["embedded" as const])];
    /** A cell: slow ones run in `npm run test:interop` and are pending, with that reason, in `npm test`. */
    const cellIt = (touchesDirect: boolean) => {
      if (peer.thirdParty === true && !PEERS_INSTALLED)
        return (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn);
      const slow = peer.slow === "all" || (peer.slow === "direct" && touchesDirect);
      if (!slow) return it;
      // Skipped in `npm test` only because it is slow; `npm run test:interop` runs it (the title says so).
      return RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);
    };

    cellIt(true)("a normal session is the same direct and through the bridge", async () => {
      const seen: Partial<Record<Placement, unknown>> = {};
      for (const placement of placements) {
        const cell = await open(peer, placement);
        try {
          const { sessionId, init } = await session(peer, cell);
          // The bridge adds its own capability under _meta; everything else must be the peer's own.
          const { _meta, ...rest } = (init.agentCapabilities ?? {}) as Message;
          const { "acp-cancel/cancellation": _ours, ...peerMeta } = (_meta ?? {}) as Message;
          const capabilities = { ...rest, _meta: peerMeta };
          let turn: unknown = "needs a model (none offline)";
          if (peer.normalPrompt !== undefined) {
            const { answer } = prompt(cell.client, sessionId, peer.normalPrompt);
            const updates = cell.client.received("session/update").map((m) => (m.params as Message).update);
            turn = { stopReason: stopReasonOf(await answer), updates };
          }
          seen[placement] = { protocolVersion: init.protocolVersion, capabilities, turn };
          assert.deepEqual(cell.client.unansweredOrRepeated(), []);
        } finally {
          await close(cell);
        }
      }
      assert.deepEqual(seen.bridge, seen.direct);
      if (peer.embedded !== undefined) assert.deepEqual(seen.embedded, seen.direct);
    });

    for (const placement of placements) {
      cellIt(placement === "direct")(`${placement}: Stop by session/cancel ends the turn 'cancelled', once`, async () => {
        const cell = await open(peer, placement);
        try {
          const { sessionId } = await session(peer, cell);
          const turn = prompt(cell.client, sessionId, peer.longPrompt);
          await until(() => (peer.turnStarted(cell.client, cell.hole) ? true : undefined), "the turn under way");
          cell.client.notify("session/cancel", { sessionId });
          const answer = await within(turn.answer, GRACE_MS + 3000);
          assert.equal(stopReasonOf(answer), "cancelled", JSON.stringify(answer));
          assert.deepEqual(cell.client.unansweredOrRepeated(), []);
        } finally {
          await close(cell);
        }
      });
    }

    cellIt(true)("direct: $/cancel_request is what the peer makes of it (recorded), then session/cancel ends the turn", async () => {
      const cell = await open(peer, "direct");
      try {
        const { sessionId } = await session(peer, cell);
        const turn = prompt(cell.client, sessionId, peer.longPrompt);
        await until(() => (peer.turnStarted(cell.client, cell.hole) ? true : undefined), "the turn under way");
        cell.client.notify("$/cancel_request", { requestId: turn.id });
        // A later request answered while the turn is not: the cancel was ignored (order, not time).
        await cell.client.request("session/new", { cwd: cell.home, mcpServers: [] }).answer;
        const honoured = cell.client.answersTo(turn.id).length > 0;
        assert.equal(honoured, peer.honoursCancelRequest);
        cell.client.notify("session/cancel", { sessionId });
        assert.equal(stopReasonOf(await within(turn.answer, GRACE_MS + 3000)), "cancelled");
        assert.deepEqual(cell.client.unansweredOrRepeated(), []);
      } finally {
        await close(cell);
      }
    });

    for (const placement of placements.filter((p) => p !== "direct")) {
      cellIt(false)(`${placement}: Stop by $/cancel_request ends the turn 'cancelled', once (session/cancel emulated)`, async () => {
        const cell = await open(peer, placement);
        try {
          const { sessionId } = await session(peer, cell);
          const turn = prompt(cell.client, sessionId, peer.longPrompt);
          await until(() => (peer.turnStarted(cell.client, cell.hole) ? true : undefined), "the turn under way");
          cell.client.notify("$/cancel_request", { requestId: turn.id });
          const answer = await within(turn.answer, GRACE_MS + 3000);
          assert.ok(answer !== undefined, "answered within the grace");
          assert.equal(stopReasonOf(answer), "cancelled", JSON.stringify(answer));
          assert.deepEqual(cell.client.unansweredOrRepeated(), []);
          if (peer.turnStopped !== undefined) assert.ok(peer.turnStopped(cell.client), "the agent itself stopped its turn");
          if (placement === "embedded") return; // the agent side is inside the agent's process
          const toAgent = agentSide(cell.client, "bridge->agent").map((m) => m.method);
          assert.ok(toAgent.includes("session/cancel"), "the agent was told in words it knows");
          // Regression: codex answers the $/cancel_request notification with an id-less error; the
          // bridge once answered that with an Invalid Request error of its own.
          const answeredTheAgent = agentSide(cell.client, "bridge->agent").filter((m) => !("method" in m) && m.id === null);
          assert.deepEqual(answeredTheAgent, [], "no answer to a response");
        } finally {
          await close(cell);
        }
      });
    }

    if (peer.permissionPrompt !== undefined) {
      const permissionPrompt = peer.permissionPrompt;
      for (const placement of placements) {
        cellIt(placement === "direct")(`${placement}: Stop with a permission dialog open: the dialog is answered 'cancelled' once, the turn ends 'cancelled'`, async () => {
          const cell = await open(peer, placement);
          try {
            const { sessionId } = await session(peer, cell);
            // The editor leaves the dialog open; on Stop it answers it as ACP requires (direct), or
            // leaves that to the bridge (whose answer makes the editor's own reply late).
            const dialogs: Message[] = [];
            cell.client.onRequest = (message) => {
              if (message.method === "session/request_permission") dialogs.push(message);
              return undefined;
            };
            const turn = prompt(cell.client, sessionId, permissionPrompt);
            const dialog = await until(() => dialogs[0], "the permission dialog");
            cell.client.notify("session/cancel", { sessionId });
            if (placement === "direct") {
              cell.client.send({ jsonrpc: "2.0", id: dialog.id, result: { outcome: { outcome: "cancelled" } } });
            } else {
              // acp-cancel tells the editor its dialog is cancelled; a polite editor then answers it.
              await until(() => (cell.client.received("$/cancel_request").length > 0 ? true : undefined), "$/cancel_request for the dialog");
              cell.client.send({ jsonrpc: "2.0", id: dialog.id, result: { outcome: { outcome: "cancelled" } } });
            }
            assert.equal(stopReasonOf(await within(turn.answer, GRACE_MS + 3000)), "cancelled");
            assert.deepEqual(cell.client.unansweredOrRepeated(), []);
            if (placement === "bridge") {
              const asked = agentSide(cell.client, "agent->bridge").filter((m) => m.method === "session/request_permission");
              const answered = agentSide(cell.client, "bridge->agent").filter(
                (m) => !("method" in m) && m.id === asked[0]?.id,
              );
              assert.deepEqual(answered.map((m) => m.result), [{ outcome: { outcome: "cancelled" } }]);
            }
          } finally {
            await close(cell);
          }
        });
      }
    }

    cellIt(false)("bridge: the client's timeout (--timeout session/prompt=1) ends the turn at the agent, answered once", async () => {
      const cell = await open(peer, "bridge", ["--timeout", "session/prompt=1"]);
      try {
        const { sessionId } = await session(peer, cell);
        const turn = prompt(cell.client, sessionId, peer.longPrompt);
        const answer = await within(turn.answer, 1000 + GRACE_MS + 3000);
        assert.ok(answer !== undefined, "answered");
        const cancelled = stopReasonOf(answer) === "cancelled" || (answer.error as { code?: number } | undefined)?.code === -32800;
        assert.ok(cancelled, JSON.stringify(answer));
        assert.deepEqual(cell.client.unansweredOrRepeated(), []);
        assert.ok(agentSide(cell.client, "bridge->agent").some((m) => m.method === "session/cancel"));
      } finally {
        await close(cell);
      }
    });

    cellIt(true)("direct: stdin closed during a turn (does the peer exit on its own?)", async () => {
      const cell = await open(peer, "direct");
      const { sessionId } = await session(peer, cell);
      prompt(cell.client, sessionId, peer.longPrompt);
      await until(() => (peer.turnStarted(cell.client, cell.hole) ? true : undefined), "the turn under way");
      const { stayed } = await close(cell);
      assert.equal(!stayed, peer.exitsOnEof, "exits on EOF as recorded in docs/interop.md");
    });

    for (const how of ["stdin closed", "SIGINT"] as const) {
      cellIt(false)(`bridge: ${how} during a turn: the bridge exits ${how === "SIGINT" ? 130 : 0} and leaves no process of the agent`, async () => {
        const cell = await open(peer, "bridge");
        const { sessionId } = await session(peer, cell);
        prompt(cell.client, sessionId, peer.longPrompt);
        await until(() => (peer.turnStarted(cell.client, cell.hole) ? true : undefined), "the turn under way");
        if (how === "SIGINT") cell.client.child.kill("SIGINT");
        const exit = await close(cell);
        assert.equal(exit.stayed, false, "the bridge exited by itself");
        assert.equal(exit.code, how === "SIGINT" ? 130 : 0);
        assert.ok(join(cell.home).length > 0);
      });
    }
  });
}
