import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GuardianClient, type GuardianRules, RulesError, startGuardian } from "../../src/a2a/index.js";
import { cancelMessage } from "../../src/a2a/cancel-payload.js";
import { parseGuardianRules } from "../../src/a2a/guardian-rules.js";
import { CLI } from "../support/bridge-harness.js";
import { exitAfterOutput } from "../support/spawn-peer.js";
import { CLIENT_CARD } from "./a2a-clients.js";
import { recordingGuardian } from "./guardians.js";

const ask = (client: GuardianClient, taskId: string, from = CLIENT_CARD.name, to = "Story teller") =>
  client.check({
    hook: "client",
    payload: cancelMessage("0.3", { id: taskId }, 1),
    from: { ...CLIENT_CARD, name: from },
    to: { name: to },
  });

async function post(url: string, body: string, headers: Record<string, string> = { "content-type": "application/json" }) {
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  let json: { error?: { code: number; message: string }; result?: unknown } | undefined;
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

describe("reference AOS guardian (node:http, declarative rules)", () => {
  it("decides by agent names and task id pattern, first match wins, and logs every decision", async () => {
    const rules: GuardianRules = {
      default: "allow",
      rules: [
        { decision: "allow", from: "Supervisor" },
        { decision: "deny", taskId: "^prod-", message: "production tasks are not cancelled", reasonCode: ["prod"] },
        { decision: "deny", to: ["Archiver", "Billing"] },
      ],
    };
    const g = await recordingGuardian(rules);
    const client = new GuardianClient({ url: g.url });
    try {
      const answers = [
        await ask(client, "prod-1", "Supervisor"),
        await ask(client, "prod-2"),
        await ask(client, "dev-1", CLIENT_CARD.name, "Billing"),
        await ask(client, "dev-2"),
      ];
      assert.deepEqual(answers.map((a) => a.decision), ["allow", "deny", "deny", "allow"]);
      assert.equal(answers[1]?.message, "production tasks are not cancelled");
      assert.deepEqual(answers[1]?.reasonCode, ["prod"]);
      assert.deepEqual(g.log.map((e) => [e.taskId, e.decision, e.rule]), [
        ["prod-1", "allow", 0],
        ["prod-2", "deny", 1],
        ["dev-1", "deny", 2],
        ["dev-2", "allow", -1],
      ]);
    } finally {
      client.close();
      await g.close();
    }
  });

  it("a rate rule applies once an agent asks more than max times within the window, per agent", async () => {
    const g = await recordingGuardian({
      default: "allow",
      rules: [{ decision: "deny", rate: { max: 2, windowMs: 60_000 }, message: "too many cancels" }],
    });
    const client = new GuardianClient({ url: g.url });
    try {
      const own = [];
      for (let i = 0; i < 4; i++) own.push((await ask(client, `t${i}`)).decision);
      assert.deepEqual(own, ["allow", "allow", "deny", "deny"]);
      assert.equal((await ask(client, "t9", "Someone else")).decision, "allow", "counted per agent");
    } finally {
      client.close();
      await g.close();
    }
  });

  describe("bad input: a specific JSON-RPC error or HTTP status, no decision, the guardian survives", () => {
    it("JSON-RPC level: parse error, batch, missing id, unknown method, invalid params", async () => {
      const g = await recordingGuardian({ default: "allow" });
      try {
        const cases: [string, number, RegExp][] = [
          ["{not json", -32700, /not JSON/],
          ["[]", -32600, /no batches/],
          [JSON.stringify({ jsonrpc: "2.0", method: "tasks/cancel" }), -32600, /an id/],
          [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: {} }), -32601, /message\/send/],
          [JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/cancel", params: {} }), -32602, /payload/],
          [
            JSON.stringify({
              jsonrpc: "2.0",
              id: 3,
              method: "tasks/cancel",
              params: {
                payload: cancelMessage("0.3", { id: "t" }, 1),
                context: { from: { agent: { name: "" }, role: "client" }, to: { agent: { name: "x" }, role: "server" } },
              },
            }),
            -32602,
            /context\.from\.agent\.name/,
          ],
        ];
        for (const [body, code, message] of cases) {
          const answer = await post(g.url, body);
          assert.equal(answer.status, 200);
          assert.equal(answer.json?.error?.code, code, body.slice(0, 60));
          assert.match(answer.json.error.message, message);
        }
        assert.equal(g.log.length, 0, "no decision was made");
        const client = new GuardianClient({ url: g.url });
        assert.equal((await ask(client, "after")).decision, "allow", "still answers");
        client.close();
      } finally {
        await g.close();
      }
    });

    it("HTTP level: method, path, content type, body size, bearer token, request rate", async () => {
      const guardian = await startGuardian({
        rules: { default: "allow", token: "s3cret" },
        maxBodyBytes: 1024,
        maxRequestsPerSecond: 1_000_000,
      });
      const auth = { "content-type": "application/json", "authorization": "Bearer s3cret" };
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
      try {
        assert.equal((await fetch(guardian.url)).status, 405);
        assert.equal((await post(`${guardian.url}elsewhere`, ping, auth)).status, 404);
        assert.equal((await post(guardian.url, ping)).status, 401);
        assert.equal((await post(guardian.url, ping, { ...auth, authorization: "Bearer wrong!" })).status, 401);
        assert.equal((await post(guardian.url, ping, { ...auth, "content-type": "text/plain" })).status, 415);
        assert.equal((await post(guardian.url, "x".repeat(5000), auth)).status, 413);
        assert.equal((await post(guardian.url, ping, auth)).status, 200);
        const tokenClient = new GuardianClient({ url: guardian.url, headers: { authorization: "Bearer s3cret" } });
        assert.equal((await tokenClient.ping()).status, "ok");
        tokenClient.close();
      } finally {
        await guardian.close();
      }
      const limited = await startGuardian({ rules: { default: "allow" }, maxRequestsPerSecond: 3 });
      try {
        const statuses = [];
        for (let i = 0; i < 5; i++) statuses.push((await post(limited.url, ping)).status);
        assert.ok(statuses.includes(429), `a burst over the rate gets 429: ${statuses.join(",")}`);
      } finally {
        await limited.close();
      }
    });

    it("rules: not JSON, missing default, unknown field, bad decision, bad pattern, each named", () => {
      const cases: [string, RegExp][] = [
        ["{", /not JSON/],
        ["{\"rules\": []}", /default/],
        ["{\"default\": \"allow\", \"rulez\": []}", /rulez/],
        ["{\"default\": \"allow\", \"rules\": [{\"decision\": \"maybe\"}]}", /rules\.0\.decision/],
        ["{\"default\": \"allow\", \"rules\": [{\"decision\": \"deny\", \"taskId\": \"(\"}]}", /rules\.0\.taskId/],
        ["{\"default\": \"deny\", \"rules\": [{\"decision\": \"deny\", \"rate\": {\"max\": -1, \"windowMs\": 10}}]}", /rules\.0\.rate\.max/],
      ];
      for (const [text, message] of cases) {
        assert.throws(
          () => parseGuardianRules(text),
          (error: unknown) => error instanceof RulesError && message.test(error.message),
          text,
        );
      }
    });
  });

  describe("as a CLI subcommand: acp-cancel guardian --rules FILE --port N", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-cancel-guardian-"));
    const rulesFile = join(dir, "rules.json");
    writeFileSync(rulesFile, JSON.stringify({ default: "deny", rules: [{ decision: "allow", taskId: "^ok-" }] }));
    after(() => rmSync(dir, { recursive: true, force: true }));

    function run(args: string[]) {
      const child = spawn(process.execPath, [CLI, "guardian", ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      // Once its output was read to the end too: 'exit' can come before its last lines are read.
      const exited = exitAfterOutput(child, [child.stdout, child.stderr]).then(({ code }) => code);
      return { child, exited, out: () => stdout, err: () => stderr };
    }

    it("starts on 127.0.0.1, decides by the rules file, logs each decision as a JSON line, stops on SIGTERM", async () => {
      const p = run(["--rules", rulesFile, "--port", "0"]);
      const url = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => {
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(p.err());
          if (match?.[1] !== undefined) {
            clearInterval(poll);
            resolve(match[1]);
          }
        }, 10);
        void p.exited.then(() => reject(new Error(`exited: ${p.err()}`)));
      });
      const client = new GuardianClient({ url });
      try {
        assert.equal((await ask(client, "ok-1")).decision, "allow");
        assert.equal((await ask(client, "nope")).decision, "deny");
      } finally {
        client.close();
      }
      p.child.kill("SIGTERM");
      assert.equal(await p.exited, 0);
      const lines = p.out().trim().split("\n").map((l) => JSON.parse(l) as { taskId: string; decision: string });
      assert.deepEqual(lines.map((l) => [l.taskId, l.decision]), [["ok-1", "allow"], ["nope", "deny"]]);
    });

    const failures: [string, string[], number, RegExp][] = [
      ["no --rules", ["--port", "0"], 2, /needs --rules FILE/],
      ["no --port", ["--rules", rulesFile], 2, /needs --port/],
      ["a port that is not a number", ["--rules", rulesFile, "--port", "http"], 2, /--port takes a port number/],
      ["a port out of range", ["--rules", rulesFile, "--port", "70000"], 2, /--port takes a port number/],
      ["an unknown flag", ["--rules", rulesFile, "--port", "0", "--loud"], 2, /loud/],
      ["a missing rules file", ["--rules", join(dir, "missing.json"), "--port", "0"], 66, /cannot read the rules file .*ENOENT/],
      ["an unreadable rules file (a directory)", ["--rules", dir, "--port", "0"], 66, /cannot read the rules file .*EISDIR/],
    ];
    for (const [what, args, status, message] of failures) {
      it(`${what}: exit ${status} with a message naming it`, async () => {
        const p = run(args);
        assert.equal(await p.exited, status);
        assert.match(p.err(), message);
      });
    }

    it("a port already in use: exit 69 naming the address", async () => {
      const taken = await startGuardian({ rules: { default: "allow" } });
      try {
        const port = new URL(taken.url).port;
        const p = run(["--rules", rulesFile, "--port", port]);
        assert.equal(await p.exited, 69);
        assert.match(p.err(), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE`));
      } finally {
        await taken.close();
      }
    });

    it("invalid rules: exit 65 naming the file and the field", async () => {
      const bad = join(dir, "bad.json");
      writeFileSync(bad, JSON.stringify({ default: "sometimes" }));
      const p = run(["--rules", bad, "--port", "0"]);
      assert.equal(await p.exited, 65);
      assert.match(p.err(), /bad\.json: invalid rules: default/);
    });
  });
});
