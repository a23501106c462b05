import assert from "node:assert/strict";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { resolveSettings } from "../../src/bridge/bridge-options.js";
import { closeBridge, isAlive, runCli, scratchDir, spawnBridge, spawnBridgeOver } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { tap, type WireRecord } from "../support/spawn-peer.js";
import { eventually, requestsIn } from "../support/wire-assertions.js";

const { methods } = acp;

function pidFrom(stderr: string, label: string): number | undefined {
  const match = new RegExp(`${label} pid (\\d+)`).exec(stderr);
  return match ? Number(match[1]) : undefined;
}

/** The live (not zombie) members of process group `pgid`, read from /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state !== "Z" && Number(pgrp) === pgid) members.push(Number(name));
  }
  return members;
}

/** The watchdogs armed over process group `pgid` (each runs `sh -c … acp-cancel-watchdog PGID`). */
function watchdogsOf(pgid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, "utf8").endsWith(`\0acp-cancel-watchdog\0${pgid}\0`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Sends raw lines to the bridge and collects what comes back, line by line. */
function rawLines(bridge: ReturnType<typeof spawnBridge>) {
  const received: Record<string, unknown>[] = [];
  let buffer = "";
  bridge.child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      received.push(JSON.parse(buffer.slice(0, newline)));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
    }
  });
  return {
    received,
    send: (line: string) => bridge.child.stdin.write(`${line}\n`),
    answer: (id: unknown) =>
      eventually(() => received.find((m) => m.id === id && !("method" in m)), `answer #${id}`),
  };
}

describe("bridge lifecycle and framing, with the bridge as a real process", () => {
  it("the agent SIGKILLed mid-prompt: every pending editor request gets a -32603 error naming the signal, a warning at the default level; exit status 137", async () => {
    const bridge = spawnBridge([], "sdk-agent", ["--bare"]);
    const log: WireRecord[] = [];
    const stream = tap(
      acp.ndJsonStream(bridge.output, bridge.input) as acp.Stream & { readable: never },
      log,
    );
    const editor = acp.client({ name: "editor" });
    const outcome = await editor
      .connectWith(stream, async (agent) => {
        const sessionId = await openSession(agent);
        const first = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "ignore-cancel"));
        const second = agent.request("_test/slow", {});
        await eventually(
          () => (bridge.hop("bridge->agent").length >= 4 ? true : undefined),
          "both requests at the agent",
        );
        const agentPid = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
        process.kill(agentPid, "SIGKILL");
        return Promise.allSettled([first, second]);
      })
      .catch((error: unknown) => error);
    const exit = await bridge.exited;
    assert.equal(exit.code, 137, bridge.stderr());
    assert.ok(Array.isArray(outcome), `pending requests were answered: ${String(outcome)}`);
    for (const settled of outcome as PromiseSettledResult<unknown>[]) {
      assert.equal(settled.status, "rejected");
      const error = (settled as PromiseRejectedResult).reason as acp.RequestError;
      // Not -32800: an editor takes that for its own Stop and shows nothing.
      assert.equal(error.code, -32603);
      assert.match(error.message, /The agent stopped before answering: agent was killed by SIGKILL/);
      assert.deepEqual(error.data, {
        reason: "agent-exited",
        detail: "agent was killed by SIGKILL",
        exitCode: null,
        signal: "SIGKILL",
      });
    }
    assert.equal(requestsIn(log, "out").length, 4);
    assert.match(
      bridge.stderr(),
      new RegExp(
        "acp-cancel warn: the agent ended on its own \\(agent was killed by SIGKILL\\); " +
        "2 pending editor request\\(s\\) get an error naming the exit",
      ),
    );
  });

  it("the agent exits with a code mid-prompt: the prompt's error names the code; the bridge exits with it", async () => {
    const script = join(scratchDir(), "exits-mid-prompt.cjs");
    writeFileSync(
      script,
      `const rl = require("readline").createInterface({ input: process.stdin });
       const answer = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\\n");
       rl.on("line", (line) => {
         const m = JSON.parse(line);
         if (m.method === "initialize") answer(m.id, { protocolVersion: 1, agentCapabilities: {} });
         else if (m.method === "session/new") answer(m.id, { sessionId: "s1" });
         else if (m.method === "session/prompt") process.exit(3);
       });`,
    );
    const bridge = spawnBridgeOver([], [process.execPath, script]);
    const wire = rawLines(bridge);
    wire.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
    await wire.answer(1);
    wire.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } }));
    await wire.answer(2);
    wire.send(
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] } }),
    );
    const answer = (await wire.answer(3)) as { error: { code: number; message: string } };
    assert.equal(answer.error.code, -32603);
    assert.equal(answer.error.message, "The agent stopped before answering: agent exited with code 3");
    assert.equal((await bridge.exited).code, 3);
    assert.match(bridge.stderr(), /warn: the agent ended on its own \(agent exited with code 3\)/);
  });

  it("the bridge SIGKILLed mid-turn (as editors end it): within 5 s nothing of the agent's process group is left", async () => {
    // The agent ignores its stdin's end and SIGTERM, and has a child: only a SIGKILL to its group ends it.
    const bridge = spawnBridge([], "sdk-agent", ["--bare", "--stubborn", "--grandchild"]);
    const wire = rawLines(bridge);
    wire.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
    await wire.answer(1);
    wire.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } }));
    const { sessionId } = (await wire.answer(2)).result as { sessionId: string };
    wire.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: textPrompt(sessionId, "ignore-cancel") }));
    await eventually(
      () => (bridge.hop("bridge->agent").some((m) => m.method === "session/prompt") ? true : undefined),
      "the prompt at the agent",
    );
    const agentPid = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
    const grandchildPid = await eventually(() => pidFrom(bridge.stderr(), "grandchild"), "the grandchild's pid");
    assert.deepEqual(groupMembers(agentPid).sort(), [agentPid, grandchildPid].sort(), "the agent's group runs");
    assert.equal(watchdogsOf(agentPid).length, 1, "a watchdog is armed over the agent's group");
    bridge.child.kill("SIGKILL");
    await bridge.exited;
    await eventually(
      () => (groupMembers(agentPid).length === 0 ? true : undefined),
      "nothing of the agent's group left within 5 s of the bridge's SIGKILL",
      5000,
    );
    await eventually(() => (watchdogsOf(agentPid).length === 0 ? true : undefined), "the watchdog exits after its work");
  });

  it("editor EOF: in-flight work is cancelled, the agent's stdin closed, then SIGTERM, then SIGKILL to its whole group", async () => {
    const bridge = spawnBridge(
      ["--exit-grace-ms", "200", "--kill-grace-ms", "200", "--log-level", "debug"],
      "sdk-agent",
      ["--bare", "--stubborn", "--grandchild"],
    );
    const agentPid = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
    const grandchildPid = await eventually(
      () => pidFrom(bridge.stderr(), "grandchild"),
      "the grandchild's pid",
    );
    assert.equal(watchdogsOf(agentPid).length, 1, "a watchdog is armed over the agent's group");
    const exit = await closeBridge(bridge);
    assert.equal(exit.code, 0);
    // The bridge stopped the group itself and told its watchdog so: nothing of it is left.
    await eventually(() => (watchdogsOf(agentPid).length === 0 ? true : undefined), "the watchdog stood down");
    assert.match(bridge.stderr(), /agent ignores SIGTERM/);
    assert.match(bridge.stderr(), /SIGKILL/);
    assert.equal(isAlive(agentPid), false, "agent gone");
    assert.equal(isAlive(grandchildPid), false, "grandchild gone");
  });

  it("SIGTERM to the bridge: the agent's group is gone and the bridge exits 143", async () => {
    const bridge = spawnBridge(["--exit-grace-ms", "200", "--kill-grace-ms", "200"], "sdk-agent", [
      "--bare",
      "--grandchild",
    ]);
    const agentPid = await eventually(() => pidFrom(bridge.stderr(), "agent"), "the agent's pid");
    const grandchildPid = await eventually(
      () => pidFrom(bridge.stderr(), "grandchild"),
      "the grandchild's pid",
    );
    bridge.child.kill("SIGTERM");
    const exit = await bridge.exited;
    assert.equal(exit.code, 143);
    assert.equal(isAlive(agentPid), false, "agent gone");
    await eventually(() => (isAlive(grandchildPid) ? undefined : true), "grandchild gone");
  });

  it("a stray log line on the agent's stdout is logged, never forwarded, and the session goes on", async () => {
    const bridge = spawnBridge([], "legacy-agent", ["--stray-stdout"]);
    const log: WireRecord[] = [];
    const stream = tap(
      acp.ndJsonStream(bridge.output, bridge.input) as acp.Stream & { readable: never },
      log,
    );
    try {
      await acp.client({ name: "editor" }).connectWith(stream, async (agent) => {
        const sessionId = await openSession(agent);
        assert.deepEqual(await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "hello")), {
          stopReason: "end_turn",
        });
        assert.deepEqual(await agent.request(methods.agent.session.prompt, textPrompt(sessionId, "again")), {
          stopReason: "end_turn",
        });
      });
    } finally {
      await closeBridge(bridge);
    }
    assert.match(bridge.stderr(), /agent stdout: line is not valid JSON .*a stray log line/);
    assert.ok(log.every((r) => typeof r.message === "object"));
  });

  it("editor bad lines: non-JSON → -32700, oversize → -32600 naming the limit (answering the id its start names), invalid → -32600; the session continues", async () => {
    const bridge = spawnBridge(["--max-line-bytes", "2000"], "sdk-agent", ["--bare"]);
    const wire = rawLines(bridge);
    try {
      wire.send("this is not json");
      wire.send(
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "_test/echo", params: { pad: "x".repeat(5000) } }),
      );
      wire.send(JSON.stringify({ jsonrpc: "2.0", id: { bad: true }, method: "_test/echo" }));
      wire.send(JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "_test/echo" }]));
      wire.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "initialize",
          params: { protocolVersion: 1, clientCapabilities: {} },
        }),
      );
      await wire.answer(3);
      wire.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "_test/echo", params: {} }));
      assert.deepEqual((await wire.answer(4)).result, { ok: true });
      const errors = wire.received.filter((m) => m.id === null) as {
        error: { code: number; message: string };
      }[];
      assert.deepEqual(
        errors.map((m) => m.error.code),
        [-32700, -32600, -32600],
      );
      assert.match(errors[0]?.error.message ?? "", /not valid JSON/);
      assert.match(errors[1]?.error.message ?? "", /invalid "id"/);
      assert.match(errors[2]?.error.message ?? "", /batches are not supported/);
      // The oversized line's id was readable from its start: the error answers that request.
      const oversize = wire.received.find((m) => m.id === 1) as { error: { code: number; message: string } };
      assert.equal(oversize.error.code, -32600);
      assert.match(oversize.error.message, /exceeds the 2000-byte limit/);
    } finally {
      await closeBridge(bridge);
    }
  });

  it("an agent command that is missing or not executable: a clear message and exit 127 / 126", async () => {
    const run = (command: string) => runCli(["bridge", "--", command], "pipe");
    const missing = await run("/nonexistent/agent");
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /agent command not found: \/nonexistent\/agent/);
    const file = join(scratchDir(), "not-executable");
    writeFileSync(file, "#!/bin/sh\n");
    chmodSync(file, 0o644);
    const denied = await run(file);
    assert.equal(denied.code, 126);
    assert.match(denied.stderr, /not executable/);
  });

  it("an oversized line whose id comes after a long params (cut off) or inside params: answered with id null", async () => {
    const bridge = spawnBridge(["--max-line-bytes", "2000"], "sdk-agent", ["--bare"]);
    const wire = rawLines(bridge);
    try {
      wire.send(JSON.stringify({ jsonrpc: "2.0", method: "_test/echo", params: { id: 7, pad: "x".repeat(5000) }, id: 8 }));
      wire.send(JSON.stringify({ jsonrpc: "2.0", id: "str-9", method: "_test/echo", params: { pad: "y".repeat(5000) } }));
      const named = (await wire.answer("str-9")) as { error: { code: number } };
      assert.equal(named.error.code, -32600);
      // An id that a request still in flight holds is not answered for the oversized line.
      wire.send(JSON.stringify({ jsonrpc: "2.0", id: 20, method: "_test/slow", params: {} }));
      await eventually(() => (bridge.hop("bridge->agent").some((m) => m.id === 20) ? true : undefined), "#20 at the agent");
      wire.send(JSON.stringify({ jsonrpc: "2.0", id: 20, method: "_test/echo", params: { pad: "z".repeat(5000) } }));
      await eventually(() => (wire.received.filter((m) => m.id === null).length === 2 ? true : undefined), "two null answers");
      assert.equal(wire.received.some((m) => m.id === 20), false, "#20 is still unanswered: its answer is its own");
      assert.equal(wire.received.some((m) => m.id === 7 || m.id === 8), false, "never the 7 inside params");
    } finally {
      await closeBridge(bridge);
    }
  });

  it("initialize has a deadline by default (60 s or less); when it passes the answer (at the deadline, not after the grace) and a warning name the cause", async () => {
    const settings = resolveSettings({ command: "agent", args: [] });
    assert.ok((settings.deadlines.initialize ?? Infinity) <= 60_000, "a default initialize deadline of 60 s or less");
    assert.equal(resolveSettings({ command: "agent", args: [], deadlines: { initialize: 5000 } }).deadlines.initialize, 5000);
    // An agent that reads its input and never answers anything.
    const bridge = spawnBridgeOver(["--timeout", "initialize=0.3", "--grace-ms", "5000"], [process.execPath, "-e", "process.stdin.resume()"]);
    const wire = rawLines(bridge);
    try {
      wire.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
      const answer = (await wire.answer(1)) as { error: { code: number; message: string; data: { reason: string } } };
      assert.equal(answer.error.code, -32800);
      assert.equal(answer.error.data.reason, "deadline");
      assert.equal(
        answer.error.message,
        "Request cancelled: the agent did not answer initialize within 0.3 s (the bridge's deadline: --timeout initialize=SECONDS changes it)",
      );
      // The grace bounds how long the agent may take to stop, not the editor's wait (issue 37 item 6).
      const trace = bridge.trace();
      const expiredAt = trace.find((e) => e.note?.includes('"reason":"deadline"'))?.t ?? NaN;
      const answeredAt = trace.find((e) => e.hop === "bridge->editor" && (e.message as { id?: unknown }).id === 1)?.t ?? NaN;
      assert.ok(answeredAt - expiredAt < 5000, `answered ${answeredAt - expiredAt} ms after the deadline passed (grace 5000 ms)`);
      // Its stderr and its stdout are two pipes: the warning may be read after the answer.
      const warning = /warn: editor request 1: the agent did not answer initialize within 0\.3 s/;
      await eventually(() => (warning.test(bridge.stderr()) ? true : undefined), "the warning").catch(() => undefined);
      assert.match(bridge.stderr(), warning);
    } finally {
      await closeBridge(bridge);
    }
  });

  it("bad command lines exit 2 with a message naming the mistake", async () => {
    const cases: [string[], RegExp][] = [
      [["bridge"], /missing the agent command/],
      [["bridge", "--grace-ms", "soon", "--", "x"], /--grace-ms takes a whole number/],
      [["bridge", "--timeout", "nope", "--", "x"], /--timeout takes METHOD=SECONDS/],
      [["bridge", "--emulate", "everyone", "--", "x"], /--emulate takes editor, agent or both/],
      [["bridge", "--frobnicate", "--", "x"], /frobnicate/],
      [["launch"], /unknown command 'launch'/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, message);
    }
  });
});
