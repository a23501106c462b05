import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { closeBridge, isAlive, runCli, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { tap, type WireRecord } from "../support/spawn-peer.js";
import { eventually, requestsIn } from "../support/wire-assertions.js";

const { methods } = acp;

function pidFrom(stderr: string, label: string): number | undefined {
  const match = new RegExp(`${label} pid (\\d+)`).exec(stderr);
  return match ? Number(match[1]) : undefined;
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
  it("the agent SIGKILLed mid-prompt: every pending editor request gets an error naming it; exit status 137", async () => {
    const bridge = spawnBridge(["--log-level", "debug"], "sdk-agent", ["--bare"]);
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
      assert.equal(error.code, -32800);
      assert.match(error.message, /agent was killed by SIGKILL/);
    }
    assert.equal(requestsIn(log, "out").length, 4);
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
    const exit = await closeBridge(bridge);
    assert.equal(exit.code, 0);
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
    await eventually(() => (isAlive(grandchildPid) ? undefined : true), "grandchild gone", 3000);
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

  it("editor bad lines: non-JSON → -32700, oversize → -32600 naming the limit, invalid → -32600; the session continues", async () => {
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
        [-32700, -32600, -32600, -32600],
      );
      assert.match(errors[0]?.error.message ?? "", /not valid JSON/);
      assert.match(errors[1]?.error.message ?? "", /exceeds the 2000-byte limit/);
      assert.match(errors[2]?.error.message ?? "", /invalid "id"/);
      assert.match(errors[3]?.error.message ?? "", /batches are not supported/);
    } finally {
      await closeBridge(bridge);
    }
  });

  it("an agent command that is missing or not executable: a clear message and exit 127 / 126", async () => {
    const run = (command: string) => runCli(["bridge", "--", command], "pipe");
    const missing = await run("/nonexistent/agent");
    assert.equal(missing.code, 127);
    assert.match(missing.stderr, /agent command not found: \/nonexistent\/agent/);
    const file = join(mkdtempSync(join(tmpdir(), "acp-cancel-")), "not-executable");
    writeFileSync(file, "#!/bin/sh\n");
    chmodSync(file, 0o644);
    const denied = await run(file);
    assert.equal(denied.code, 126);
    assert.match(denied.stderr, /not executable/);
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
