import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fixturePath } from "../support/spawn-peer.js";

const REPLICAS = fileURLToPath(new URL("../../src/replicas/index.js", import.meta.url));

/** The `pg` and `redis` files a snippet loaded (the project's load recorder, preloaded). */
function peersLoaded(code: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-loads-"));
  try {
    const log = join(dir, "loads.txt");
    const run = spawnSync(process.execPath, ["--import", fixturePath("record-loads"), "--input-type=module", "-e", code], {
      env: { ...process.env, ACP_CANCEL_LOAD_LOG: log },
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    const text = readFileSync(log, "utf8");
    assert.ok(text.includes("/src/replicas/"), "the recorder saw acp-cancel/replicas");
    return ["pg", "redis"].filter((peer) => text.includes(`/node_modules/${peer}/`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("acp-cancel/replicas loads its optional peers only for the bus in use", () => {
  it("importing it loads neither pg nor redis", () => {
    assert.deepEqual(peersLoaded(`await import(${JSON.stringify(REPLICAS)});`), []);
  });

  it("a Redis bus loads redis and not pg (and the other way round), even with the backend down", () => {
    const open = (factory: string) =>
      `const r = await import(${JSON.stringify(REPLICAS)}); const bus = await r.${factory}(${JSON.stringify(
        factory === "redisCancelBus" ? "redis://127.0.0.1:1" : "postgres://x@127.0.0.1:1/x",
      )}, { operationMs: 100 }); await bus.close();`;
    assert.deepEqual(peersLoaded(open("redisCancelBus")), ["redis"]);
    assert.deepEqual(peersLoaded(open("postgresCancelBus")), ["pg"]);
  });
});
