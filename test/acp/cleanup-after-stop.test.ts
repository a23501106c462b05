import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk";
import { closeBridge, isAlive, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { endAndAwaitExit, type SpawnedPeer, spawnFixture, tap, type WireRecord } from "../support/spawn-peer.js";
import { assertEachAnsweredOnce, errorCode, eventually, HANG_LIMIT_MS, requestsIn, responsesTo } from "../support/wire-assertions.js";

const { methods } = acp;

/** An editor whose terminals run real processes: `terminal/release` and `terminal/kill` end them. */
function terminalEditor() {
  const processes = new Map<string, ChildProcess>();
  const released: string[] = [];
  const extensionStops: string[] = [];
  let next = 0;
  const kill = (terminalId: string) => processes.get(terminalId)?.kill("SIGKILL");
  const editor = acp
    .client({ name: "terminal-editor" })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      const terminalId = `term-${++next}`;
      processes.set(terminalId, spawn(params.command, params.args ?? [], { stdio: "ignore" }));
      return { terminalId };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params, signal }) => {
      const child = processes.get(params.terminalId);
      if (child === undefined) throw acp.RequestError.invalidParams({ terminalId: params.terminalId });
      const code = await new Promise<number | null>((resolve, reject) => {
        if (child.exitCode !== null) resolve(child.exitCode);
        child.once("exit", (exitCode) => resolve(exitCode));
        signal.addEventListener("abort", () => reject(new DOMException("Stop", "AbortError")), { once: true });
      });
      return { exitCode: code };
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      kill(params.terminalId);
      return {};
    })
    .onRequest("*", ({ method }) => {
      if (method !== "_acme/stop_job") throw acp.RequestError.methodNotFound(method);
      extensionStops.push(method);
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      released.push(params.terminalId);
      kill(params.terminalId);
      processes.delete(params.terminalId);
      return {};
    });
  return { editor, processes, released, extensionStops };
}

/**
 * Waits for the editor's answer to terminal/release on the wire. The agent releases in its
 * `finally`, before its own answer; but an answer given for it once the grace has run out (a
 * loaded machine) comes first, and closing the connection at that answer would drop the release.
 */
function releaseAnswered(log: WireRecord[]): Promise<true> {
  return eventually(() => {
    const release = requestsIn(log, "in", "terminal/release")[0];
    return release !== undefined && responsesTo(log, "out", release.id).length > 0 ? true : undefined;
  }, "the editor's answer to terminal/release");
}

type Running = SpawnedPeer & { close(): Promise<unknown> };

const placements: { name: string; start(agentArgs: string[]): Running }[] = [
  {
    name: "embedded (the agent adopted with withCancellation)",
    start(agentArgs) {
      const peer = spawnFixture("terminal-agent", agentArgs);
      return {
        ...peer,
        // Killed if it hangs, so that a failing test cannot leave it behind.
        close: () => endAndAwaitExit(peer, HANG_LIMIT_MS),
      };
    },
  },
  {
    name: "bridge, adopted agent",
    start(agentArgs) {
      const bridge = spawnBridge([], "terminal-agent", agentArgs);
      return { ...bridge, close: () => closeBridge(bridge) };
    },
  },
  {
    name: "bridge, bare SDK agent",
    start(agentArgs) {
      const bridge = spawnBridge([], "terminal-agent", ["--bare", ...agentArgs]);
      return { ...bridge, close: () => closeBridge(bridge) };
    },
  },
];

describe("cleanup after Stop: terminal/kill and terminal/release are never cancelled at birth", () => {
  for (const placement of placements) {
    for (const killFirst of [false, true]) {
      const what = killFirst ? "terminal/kill then terminal/release" : "terminal/release";
      it(`${placement.name}: after Stop the agent's ${what} reaches the editor and the command stops`, async () => {
        const running = placement.start(killFirst ? ["--kill-first"] : []);
        const { editor, processes, released } = terminalEditor();
        const log: WireRecord[] = [];
        const stream = tap(acp.ndJsonStream(running.output, running.input) as acp.Stream & { readable: never }, log);
        try {
          const { stopReason, commandPid } = await editor.connectWith(stream, async (agent) => {
            const sessionId = await openSession(agent);
            const turn = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "run"));
            await eventually(
              () => (requestsIn(log, "in", "terminal/wait_for_exit").length > 0 ? true : undefined),
              "the agent waiting for its command",
            );
            const commandPid = processes.get("term-1")?.pid;
            assert.ok(commandPid !== undefined && isAlive(commandPid), "the command runs before Stop");
            await agent.notify(methods.agent.session.cancel, { sessionId });
            const answer = (await turn) as { stopReason: string };
            await releaseAnswered(log);
            return { stopReason: answer.stopReason, commandPid };
          });
          assert.equal(stopReason, "cancelled");
          const wait = requestsIn(log, "in", "terminal/wait_for_exit")[0];
          assert.equal(errorCode(responsesTo(log, "out", wait?.id)[0]), -32800, "the editor answered the wait -32800");
          const release = requestsIn(log, "in", "terminal/release");
          assert.equal(release.length, 1, "terminal/release reached the editor");
          assert.deepEqual(released, ["term-1"]);
          assert.ok("result" in (responsesTo(log, "out", release[0]?.id)[0] ?? {}), "the editor's release answer");
          if (killFirst) assert.equal(requestsIn(log, "in", "terminal/kill").length, 1, "terminal/kill reached the editor");
          await eventually(() => (isAlive(commandPid) ? undefined : true), "the command's process gone");
          assertEachAnsweredOnce(log);
        } finally {
          for (const child of processes.values()) child.kill("SIGKILL");
          await running.close();
        }
      });
    }
  }
});

describe("cleanup after Stop: an extension method joins the table with --cleanup-method", () => {
  for (const declared of [false, true]) {
    it(`bridge, bare SDK agent: _acme/stop_job ${declared ? "reaches" : "does not reach"} the editor after Stop${declared ? " with --cleanup-method" : ""}`, async () => {
      const bridge = spawnBridge(declared ? ["--cleanup-method", "_acme/stop_job"] : [], "terminal-agent", ["--bare", "--ext-stop"]);
      const { editor, processes, extensionStops } = terminalEditor();
      const log: WireRecord[] = [];
      const stream = tap(acp.ndJsonStream(bridge.output, bridge.input) as acp.Stream & { readable: never }, log);
      try {
        await editor.connectWith(stream, async (agent) => {
          const sessionId = await openSession(agent);
          const turn = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "run"));
          await eventually(() => (requestsIn(log, "in", "terminal/wait_for_exit").length > 0 ? true : undefined), "the wait");
          await agent.notify(methods.agent.session.cancel, { sessionId });
          await turn;
          await releaseAnswered(log);
        });
        assert.deepEqual(extensionStops, declared ? ["_acme/stop_job"] : []);
        const fromAgent = bridge.hop("agent->bridge").filter((m) => m.method === "_acme/stop_job");
        const answered = bridge.hop("bridge->agent").filter((m) => !("method" in m) && m.id === fromAgent[0]?.id);
        assert.equal(answered.length, 1, "the agent's request answered once");
        if (!declared) assert.equal(errorCode(answered[0]), -32800, "cancelled at birth without the flag");
        assert.equal(requestsIn(log, "in", "terminal/release").length, 1, "the release goes out either way");
        assertEachAnsweredOnce(log);
      } finally {
        for (const child of processes.values()) child.kill("SIGKILL");
        await closeBridge(bridge);
      }
    });
  }
});
