/**
 * Slow, soak-style (about 10 s): an unauthenticated flood of 20,000 requests over 10 s against
 * the reference guardian (the CLI, in its own process) must not starve authorised callers. At
 * least 95% of the checks an authorised GuardianClient makes meanwhile are answered by the
 * guardian itself, not by the fail policy (issue 25, item 8). A count, not a timing: each check
 * has GuardianClient's default timeout, as in production.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cancelMessage } from "../../src/a2a/cancel-payload.js";
import { GuardianClient } from "../../src/a2a/index.js";
import { exitAfterOutput } from "../support/spawn-peer.js";
import { CLIENT_CARD } from "./a2a-clients.js";
import { runGuardianCli } from "./guardians.js";

const FLOOD_REQUESTS = 20_000;
const FLOOD_MS = 10_000;
const CHECK_EVERY_MS = 50;

/**
 * The flood, run as its own process so it does not share this one's event loop: POSTs without a
 * token, paced to FLOOD_REQUESTS over FLOOD_MS, at most 256 in flight. Prints what it got as JSON.
 */
const FLOOD_SCRIPT = `
import http from "node:http";
const [url, total, overMs] = process.argv.slice(1);
const target = new URL(url);
const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
const agent = new http.Agent({ keepAlive: false, maxSockets: 256 });
const counts = {};
let sent = 0, settled = 0, inFlight = 0;
const started = performance.now();
function one() {
  sent++; inFlight++;
  const req = http.request({ host: target.hostname, port: target.port, path: "/", method: "POST", agent,
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
    res.resume();
    res.on("end", () => done(String(res.statusCode)));
  });
  req.on("error", (e) => done(e.code ?? "error"));
  req.end(body);
}
function done(what) {
  counts[what] = (counts[what] ?? 0) + 1; settled++; inFlight--;
  if (settled === Number(total)) {
    process.stdout.write(JSON.stringify({ sent, counts, ms: performance.now() - started }));
    process.exit(0);
  }
}
const tick = setInterval(() => {
  const due = Math.min(Number(total), Math.ceil(((performance.now() - started) / Number(overMs)) * Number(total)));
  while (sent < due && inFlight < 256) one();
  if (sent === Number(total)) clearInterval(tick);
}, 5);
`;

function startFlood(url: string): Promise<{ sent: number; counts: Record<string, number>; ms: number }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", FLOOD_SCRIPT, url, String(FLOOD_REQUESTS), String(FLOOD_MS)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  // Its figures are parsed once stdout was read to the end: 'exit' can come before its last bytes are read.
  return exitAfterOutput(child, [child.stdout]).then(({ code }) => {
    if (code !== 0) throw new Error(`the flood exited ${code}`);
    return JSON.parse(out) as never;
  });
}

describe("reliability: an unauthenticated flood against the guardian does not starve authorised callers", function () {
  this.timeout(0);
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-guardian-flood-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${FLOOD_REQUESTS.toLocaleString("en")} requests without a token over ${FLOOD_MS / 1000} s: at least 95% of authorised checks answered by the guardian`, async () => {
    const rules = join(dir, "rules.json");
    writeFileSync(rules, JSON.stringify({ default: "allow", tokens: [{ agent: CLIENT_CARD.name, token: "t-authorised" }] }));
    const cli = runGuardianCli(["--rules", rules, "--port", "0"]);
    const url = await cli.listening();
    const client = new GuardianClient({ url, headers: { authorization: "Bearer t-authorised" } });
    try {
      let flooding = true;
      const flood = startFlood(url).finally(() => (flooding = false));
      const sources: string[] = [];
      const failures = new Map<string, number>();
      for (let n = 0; flooding; n++) {
        const decision = await client.check({
          hook: "client",
          payload: cancelMessage("0.3", { id: `task-${n}` }, n),
          from: CLIENT_CARD,
          to: { name: "Story teller" },
        });
        sources.push(decision.source);
        if (decision.failure !== undefined) failures.set(decision.failure, (failures.get(decision.failure) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, CHECK_EVERY_MS));
      }
      const report = await flood;
      assert.equal(report.sent, FLOOD_REQUESTS);
      const httpAnswers = Object.entries(report.counts).filter(([k]) => /^\d+$/.test(k)).reduce((sum, [, n]) => sum + n, 0);
      assert.ok(httpAnswers >= FLOOD_REQUESTS * 0.9, `the flood reached the guardian: ${JSON.stringify(report.counts)}`);
      const answered = sources.filter((s) => s === "guardian").length;
      const summary = `${answered} of ${sources.length} checks answered by the guardian; failures ${JSON.stringify([...failures])}; flood ${JSON.stringify(report)}`;
      assert.ok(sources.length >= 20, `enough checks during the flood: ${summary}`);
      assert.ok(answered >= sources.length * 0.95, summary);
      assert.ok((report.counts["401"] ?? 0) >= FLOOD_REQUESTS * 0.9, `the flood was refused as unauthenticated: ${summary}`);
    } finally {
      client.close();
      cli.child.kill("SIGTERM");
      await cli.exited;
    }
  });
});
