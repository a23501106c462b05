import assert from "node:assert/strict";
import { linkSync, readFileSync, statSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { REDACTED, redactSecrets } from "../../src/bridge/redact.js";
import { TraceWriter } from "../../src/bridge/trace-writer.js";
import { closeBridge, runCli, scratchDir, spawnBridge } from "../support/bridge-harness.js";
import { eventually } from "../support/wire-assertions.js";

/** An agent that exits at once: enough for the bridge to open (or refuse) its trace. */
const quickAgent = ["--", process.execPath, "-e", ""];
let files = 0;
const fresh = (name: string) => join(scratchDir(), `${++files}-${name}`);

/** A session/new carrying every kind of secret a trace used to hold in clear. */
const sessionNew = {
  jsonrpc: "2.0",
  id: 2,
  method: "session/new",
  params: {
    cwd: "/tmp",
    mcpServers: [
      {
        name: "github",
        command: "/bin/true",
        args: ["--stdio", "--api-key=args-secret-7", "--token", "args-secret-8"],
        env: [{ name: "GITHUB_TOKEN", value: "ghp-env-secret-1" }],
      },
      {
        type: "http",
        name: "web",
        url: "http://mcp-user:url-secret-9@127.0.0.1:9/mcp?api_key=url-secret-10&mode=fast",
        headers: [
          { name: "Authorization", value: "Bearer bearer-secret-2" },
          { name: "X-Api-Key", value: "header-secret-3" },
          { name: "Accept", value: "application/json" },
        ],
      },
    ],
    _meta: { vendor: { apiKey: "meta-secret-4", client_secret: "meta-secret-5", password: "meta-secret-6", inputTokens: 12 } },
  },
};
const SECRETS = [
  ...["ghp-env-secret-1", "bearer-secret-2", "header-secret-3", "meta-secret-4", "meta-secret-5", "meta-secret-6"],
  ...["args-secret-7", "args-secret-8", "url-secret-9", "url-secret-10"],
];

/** Runs a bridge that sees `sessionNew`, and returns its trace's text once the agent answered. */
async function traceOfSessionNew(bridgeArgs: string[]): Promise<{ text: string; file: string }> {
  const bridge = spawnBridge(bridgeArgs, "sdk-agent", ["--bare"]);
  try {
    bridge.child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`,
    );
    bridge.child.stdin.write(`${JSON.stringify(sessionNew)}\n`);
    await eventually(() => (bridge.hop("bridge->editor").some((m) => m.id === 2) ? true : undefined), "session/new answered");
  } finally {
    await closeBridge(bridge);
  }
  return { text: readFileSync(bridge.traceFile, "utf8"), file: bridge.traceFile };
}

describe("bridge --trace files: private, never through a link, secrets redacted", () => {
  it("the trace is created mode 0600, with env values, credential headers and secret-named keys redacted", async () => {
    const { text, file } = await traceOfSessionNew([]);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    for (const secret of SECRETS) assert.equal(text.includes(secret), false, `${secret} is not in the trace`);
    // What is not a secret stays: names, the harmless header, token counts, the prompt-free rest.
    const keptUrl = `http://mcp-user:${REDACTED}@127.0.0.1:9/mcp?api_key=${REDACTED}&mode=fast`;
    const keptArgs = `["--stdio","--api-key=${REDACTED}","--token","${REDACTED}"]`;
    for (const kept of ["GITHUB_TOKEN", "X-Api-Key", "application/json", '"inputTokens":12', keptUrl, keptArgs])
      assert.ok(text.includes(kept), `${kept} is kept`);
    assert.ok(text.includes(REDACTED));
  });

  it("--trace-secrets keeps them (and needs --trace)", async () => {
    const { text } = await traceOfSessionNew(["--trace-secrets"]);
    for (const secret of SECRETS) assert.ok(text.includes(secret), `${secret} is kept`);
    const without = await runCli(["bridge", "--trace-secrets", ...quickAgent]);
    assert.equal(without.code, 2);
    assert.match(without.stderr, /--trace-secrets keeps secrets in a trace: it needs --trace FILE/);
  });

  it("a symbolic link is refused with exit 73 and a clear line; its target is untouched, a dangling one not created", async () => {
    const target = fresh("target.txt");
    writeFileSync(target, "precious\n");
    const link = fresh("link.jsonl");
    symlinkSync(target, link);
    const run = await runCli(["bridge", "--trace", link, ...quickAgent]);
    assert.equal(run.code, 73);
    assert.match(run.stderr, new RegExp(`acp-cancel: --trace: cannot write '${link}': refused: it is a symbolic link`));
    assert.equal(readFileSync(target, "utf8"), "precious\n");
    const nowhere = fresh("nowhere.txt");
    const dangling = fresh("dangling.jsonl");
    symlinkSync(nowhere, dangling);
    assert.equal((await runCli(["bridge", "--trace", dangling, ...quickAgent])).code, 73);
    assert.equal(existsSync(nowhere), false);
  });

  it("the user's own regular file is replaced and made 0600; one with another hard link is refused", async () => {
    const own = fresh("old-trace.jsonl");
    writeFileSync(own, "an older trace\n", { mode: 0o644 });
    const run = await runCli(["bridge", "--trace", own, ...quickAgent]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(statSync(own).mode & 0o777, 0o600);
    assert.equal(readFileSync(own, "utf8").includes("an older trace"), false);
    const linked = fresh("linked.txt");
    writeFileSync(linked, "keep\n");
    const second = fresh("second-name.jsonl");
    linkSync(linked, second);
    const refused = await runCli(["bridge", "--trace", second, ...quickAgent]);
    assert.equal(refused.code, 73);
    assert.match(refused.stderr, /refused: it has other hard links/);
    assert.equal(readFileSync(linked, "utf8"), "keep\n");
  });

  it("the redaction is a JSON.stringify replacer: env maps, Basic credentials, nested keys; token counts kept", () => {
    const text = JSON.stringify(
      {
        env: { HOME: "/home/u", AWS_SECRET_ACCESS_KEY: "s1" },
        nested: { deeper: { "refresh-token": "s2", "privateKey": { pem: "s3" } } },
        header: "Basic czQ6",
        usage: { outputTokens: 5, totalTokens: 9 },
      },
      redactSecrets,
    );
    assert.deepEqual(JSON.parse(text), {
      env: { HOME: REDACTED, AWS_SECRET_ACCESS_KEY: REDACTED },
      nested: { deeper: { "refresh-token": REDACTED, "privateKey": REDACTED } },
      header: REDACTED,
      usage: { outputTokens: 5, totalTokens: 9 },
    });
  });
});

/** What the trace would hold for `value`, parsed back. */
const redacted = (value: unknown): unknown => JSON.parse(JSON.stringify(value, redactSecrets)) as unknown;

describe("bridge trace redaction: MCP server args, URLs and header names", () => {
  it("args: a credential flag's =value and the value after a lone credential flag are hidden; other args kept", () => {
    const args = ["--verbose", "--api-key=abc", "--token", "abc", "positional", "-secret=s", "--password", "--port", "8", "--auth", "a"];
    const kept = ["--verbose", `--api-key=${REDACTED}`, "--token", REDACTED, "positional", `-secret=${REDACTED}`];
    assert.deepEqual(redacted({ command: "/bin/mcp", args }), {
      command: "/bin/mcp",
      args: [...kept, "--password", "--port", "8", "--auth", REDACTED],
    });
    // A header given as one argument (mcp-remote's --header), a URL argument, and what is not a string.
    assert.deepEqual(redacted({ args: ["--header", "X-Auth-Token: t", "https://u:p@h.example/mcp", "Accept: a/b", 7, null] }), {
      args: ["--header", `X-Auth-Token: ${REDACTED}`, `https://u:${REDACTED}@h.example/mcp`, "Accept: a/b", 7, null],
    });
  });

  it("URLs: the userinfo secret and credential query values are hidden, the rest kept; a non-URL is left alone", () => {
    const servers = [
      { type: "http", name: "a", url: "https://me:pw@mcp.example/v1?api_key=k&mode=fast&Token=t&page=2", headers: [] },
      { type: "sse", name: "b", url: "wss://TOKEN@mcp.example/ws?key=AIza&client=x#access_token=f&state=s", headers: [] },
      { type: "http", name: "c", url: "https://mcp.example/v1?%74oken=t&Pass_Word=p", headers: [] },
      { type: "http", name: "d", url: "HTTPS://MCP.example:443/v1?mode=fast&keyboard=us#top", headers: [] },
    ];
    assert.deepEqual(
      (redacted({ mcpServers: servers }) as { mcpServers: { url: string }[] }).mcpServers.map((server) => server.url),
      [
        `https://me:${REDACTED}@mcp.example/v1?api_key=${REDACTED}&mode=fast&Token=${REDACTED}&page=2`,
        `wss://${REDACTED}@mcp.example/ws?key=${REDACTED}&client=x#access_token=${REDACTED}&state=s`,
        `https://mcp.example/v1?%74oken=${REDACTED}&Pass_Word=${REDACTED}`,
        "HTTPS://MCP.example:443/v1?mode=fast&keyboard=us#top", // nothing hidden: written as it came
      ],
    );
    for (const odd of ["not a url?token=x", "ftp://u:p@h/?token=x", "https://[bad?token=x", "mcp.example/?token=x"])
      assert.deepEqual(redacted({ url: odd }), { url: odd }, odd);
    assert.deepEqual(redacted({ url: 42, args: "--token x", headers: { length: 1 } }), { url: 42, args: "--token x", headers: { length: 1 } });
  });

  it("headers: the common credential header names are hidden; others and the auth capability object are kept", () => {
    const names = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token", "Api-Key"];
    names.push("X-Amz-Security-Token", "X-Goog-Api-Key", "Private-Token", "Ocp-Apim-Subscription-Key", "X-Access-Key");
    const headers = [...names, "Accept", "X-Request-Id"].map((name) => ({ name, value: `value of ${name}` }));
    assert.deepEqual(redacted({ headers }), {
      headers: headers.map(({ name, value }) => ({ name, value: names.includes(name) ? REDACTED : value })),
    });
    const capabilities = { auth: { terminal: true }, authMethods: [{ id: "login", name: "Log in" }] };
    assert.deepEqual(redacted(capabilities), capabilities);
  });

  it("TraceWriter hides all of these, and keeps them all with keepSecrets (--trace-secrets)", async () => {
    const server = { name: "s", command: "/bin/mcp", args: ["--api-key=A1", "--token", "A2"], env: [] };
    const remote = { type: "http", name: "r", url: "https://u:A3@h.example/?token=A4", headers: [{ name: "Cookie", value: "A5" }] };
    const traceWith = async (keepSecrets: boolean): Promise<string> => {
      const file = fresh("writer.jsonl");
      const writer = new TraceWriter(file, { keepSecrets });
      writer.message("editor->bridge", { jsonrpc: "2.0", id: 1, method: "session/load", params: { mcpServers: [server, remote] } });
      await writer.close();
      return readFileSync(file, "utf8");
    };
    const hidden = await traceWith(false);
    const kept = await traceWith(true);
    for (const secret of ["A1", "A2", "A3", "A4", "A5"]) {
      assert.equal(hidden.includes(secret), false, `${secret} is hidden`);
      assert.ok(kept.includes(secret), `${secret} is kept with keepSecrets`);
    }
    assert.equal(kept.includes(REDACTED), false);
  });
});
