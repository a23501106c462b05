import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { openSession, textPrompt } from "../support/client-harness.js";
import { fixturePath } from "../support/spawn-peer.js";

const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const OPTIONAL_PEERS = Object.entries(pkg.peerDependenciesMeta)
  .filter(([, meta]) => meta.optional === true)
  .map(([name]) => name);
const ROOT = fileURLToPath(new URL("../../src/index.js", import.meta.url));

function newLog(): string {
  return join(mkdtempSync(join(tmpdir(), "acp-cancel-loads-")), "loads.txt");
}

/** The optional peers whose files appear in a load log. */
function peersIn(log: string): string[] {
  const text = readFileSync(log, "utf8");
  rmSync(dirname(log), { recursive: true, force: true });
  return OPTIONAL_PEERS.filter((peer) => text.includes(`/node_modules/${peer}/`));
}

/** Runs an ESM snippet with the load recorder preloaded; returns the log file. */
function runRecorded(code: string): string {
  const log = newLog();
  const run = spawnSync(
    process.execPath,
    ["--import", fixturePath("record-loads"), "--input-type=module", "-e", code],
    { env: { ...process.env, ACP_CANCEL_LOAD_LOG: log }, encoding: "utf8" },
  );
  assert.equal(run.status, 0, run.stderr);
  return log;
}

describe("the optional peers are never loaded by acp-cancel's core paths", () => {
  it("the optional peers are the bindings' SDKs, the replicas' database clients and the OpenTelemetry API", () => {
    assert.deepEqual(OPTIONAL_PEERS.sort(), [
      "@a2a-js/sdk",
      "@modelcontextprotocol/client",
      "@modelcontextprotocol/sdk",
      "@modelcontextprotocol/server",
      "@opentelemetry/api",
      "pg",
      "playwright-core",
      "redis",
      "ws",
    ]);
  });

  it("the recorder sees a peer when one is loaded (ESM and CommonJS)", () => {
    assert.deepEqual(peersIn(runRecorded('await import("ws");')), ["ws"]);
    const cjs = runRecorded('import { createRequire } from "node:module"; createRequire(import.meta.url)("ws");');
    assert.deepEqual(peersIn(cjs), ["ws"]);
  });

  it("importing acp-cancel (and its core, wire, jsonrpc and bridge entries) loads none of them", () => {
    const entries = ["index.js", "core/index.js", "wire/index.js", "jsonrpc/index.js", "bridge/index.js"].map((file) =>
      JSON.stringify(join(ROOT, "..", file)),
    );
    const log = runRecorded(entries.map((entry) => `await import(${entry});`).join("\n"));
    assert.ok(readFileSync(log, "utf8").includes("/src/acp/engine.js"), "the recorder saw acp-cancel itself");
    assert.deepEqual(peersIn(log), []);
  });

  it("running the bridge through a whole session loads none of them", async () => {
    const log = newLog();
    const bridge = spawnBridge([], "sdk-agent", [], {
      nodeArgs: ["--import", fixturePath("record-loads")],
      env: { ACP_CANCEL_LOAD_LOG: log },
    });
    const stream = acp.ndJsonStream(bridge.output, bridge.input);
    await acp.client({ name: "editor" }).connectWith(stream, async (agent) => {
      const sessionId = await openSession(agent);
      await agent.request(acp.methods.agent.session.prompt, textPrompt(sessionId, "hello"));
    });
    assert.equal((await closeBridge(bridge)).code, 0);
    assert.ok(readFileSync(log, "utf8").includes("/src/bridge/bridge.js"), "the recorder ran in the bridge");
    assert.deepEqual(peersIn(log), []);
  });
});
