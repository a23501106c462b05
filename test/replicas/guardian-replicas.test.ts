/**
 * Issue 27 item 4: two `acp-cancel guardian --redis URL` processes on one Redis enforce one rate.
 * A rule of "2 cancels per window" lets 2 of 4 cancels through, however the checks are spread
 * over the replicas; each replica alone would allow all 4 of its own.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cancelMessage } from "../../src/a2a/cancel-payload.js";
import { GuardianClient, type GuardianRules } from "../../src/a2a/index.js";
import { CLIENT_CARD } from "../a2a/a2a-clients.js";
import { type GuardianCli, runGuardianCli } from "../a2a/guardians.js";
import { eventually } from "../support/wire-assertions.js";
import { type RealServer, startRedis } from "./servers.js";

const RULES: GuardianRules = {
  default: "allow",
  rules: [{ decision: "deny", rate: { max: 2, windowMs: 60_000 }, message: "too many cancels" }],
};

describe("guardian replicas share one rate on Redis (acp-cancel guardian --redis)", function () {
  this.timeout(60_000);
  let redis: RealServer;
  let dir: string;
  const running: GuardianCli[] = [];
  const clients: GuardianClient[] = [];

  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), "acp-cancel-guardian-replicas-"));
    writeFileSync(join(dir, "rules.json"), JSON.stringify(RULES));
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const cli of running.splice(0)) {
      cli.child.kill("SIGTERM");
      await cli.exited;
    }
  });
  after(async () => {
    await redis?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function replica(extra: string[]): Promise<GuardianClient> {
    const cli = runGuardianCli(["--rules", join(dir, "rules.json"), "--port", "0", ...extra]);
    running.push(cli);
    const client = new GuardianClient({ url: await cli.listening() });
    clients.push(client);
    return client;
  }

  const ask = (client: GuardianClient, taskId: string) =>
    client.check({
      hook: "client",
      payload: cancelMessage("0.3", { id: taskId }, 1),
      from: { ...CLIENT_CARD, name: "Content generator" },
      to: { name: "Story teller" },
    });

  it("4 cancels alternated over two replicas: the first 2 allowed, the rest denied by the rate rule", async () => {
    const a = await replica(["--redis", redis.url]);
    const b = await replica(["--redis", redis.url]);
    const decisions = [];
    for (const [n, client] of [a, b, a, b].entries()) decisions.push((await ask(client, `task-${n}`)).decision);
    assert.deepEqual(decisions, ["allow", "allow", "deny", "deny"]);
    // Logged on its stdout before it answers over HTTP, but nothing orders two pipes for the reader: wait for it.
    for (const cli of running) {
      await eventually(() => (/"decision"/.test(cli.out()) ? true : undefined), "each replica's decision log").catch(() => undefined);
      assert.match(cli.out(), /"decision"/, "each replica logged its decisions");
    }
  });

  it("without --redis each replica counts alone (what the flag is for): all 4 allowed", async () => {
    const a = await replica([]);
    const b = await replica([]);
    const decisions = [];
    for (const [n, client] of [a, b, a, b].entries()) decisions.push((await ask(client, `task-${n}`)).decision);
    assert.deepEqual(decisions, ["allow", "allow", "allow", "allow"]);
  });

  it("a --redis that is not a redis URL is a usage error (exit 2) naming the flag", async () => {
    const cli = runGuardianCli(["--rules", join(dir, "rules.json"), "--port", "0", "--redis", "localhost:6379"]);
    const { code } = await cli.exited;
    assert.equal(code, 2);
    assert.match(cli.err(), /--redis takes a redis:\/\/ or rediss:\/\/ URL, got 'localhost:6379'/);
  });

  it("with Redis hung (SIGSTOP), SIGTERM still ends the guardian: its Redis close is bounded (issue 35.7)", async () => {
    const cli = runGuardianCli(["--rules", join(dir, "rules.json"), "--port", "0", "--redis", redis.url]);
    running.push(cli);
    await cli.listening();
    redis.pause();
    try {
      const started = Date.now();
      cli.child.kill("SIGTERM");
      await cli.exited;
      const took = Date.now() - started;
      assert.ok(took < 2000 + 3000, `exited within the 2 s close bound and a margin for a busy machine (${took} ms)`);
    } finally {
      redis.resume();
    }
  });
});
