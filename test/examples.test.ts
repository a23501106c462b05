import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { exitAfterOutput } from "./support/spawn-peer.js";
import { HANG_LIMIT_MS } from "./support/wire-assertions.js";

const clientPath = fileURLToPath(new URL("../examples/embedded-client.js", import.meta.url));

/** Runs a compiled example to completion; kills it if it does not exit by itself. */
async function runExample(path: string, limitMs = HANG_LIMIT_MS) {
  const child = spawn(process.execPath, [path], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
  // Once its output was read to the end too: 'exit' can come before its last lines are read.
  const { code, signal } = await exitAfterOutput(child, [child.stdout, child.stderr]);
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

describe("examples", () => {
  it("embedded-client: Stop during the permission dialog ends the turn cancelled and leaves no job behind", async () => {
    const { code, signal, stdout, stderr } = await runExample(clientPath);
    const context = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    assert.equal(signal, null, `the example exited by itself\n${context}`);
    assert.equal(code, 0, context);
    assert.match(stdout, /cancelled session\/request_permission \(agent #\d+, session\)/, context);
    assert.match(stdout, /prompt ended: \{"stopReason":"cancelled"\}/, context);
    assert.match(stdout, /in flight: \{"client":0,"agent":0\}/, context);
    assert.match(stdout, /agent exited with code 0/, context);
  });
});
