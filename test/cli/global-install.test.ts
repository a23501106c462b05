/**
 * The CLI installed globally without its optional peers, as `npm i -g` leaves it: a copy of the
 * build in `<prefix>/lib/node_modules/acp-cancel`, with only its own dependencies beside it.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BUILD_SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const REPO = fileURLToPath(new URL("../../../", import.meta.url));

describe("a global install without the optional peers: one line naming the npm command for that prefix", function () {
  let prefix: string;
  let main: string;
  before(() => {
    prefix = mkdtempSync(join(tmpdir(), "acp-cancel-global-"));
    const modules = join(prefix, "lib", "node_modules");
    const root = join(modules, "acp-cancel");
    mkdirSync(root, { recursive: true });
    cpSync(BUILD_SRC, join(root, "dist"), { recursive: true });
    cpSync(join(REPO, "package.json"), join(root, "package.json"));
    for (const dependency of ["@agentclientprotocol/sdk", "vscode-jsonrpc", "zod"]) {
      mkdirSync(join(modules, dependency, ".."), { recursive: true });
      symlinkSync(join(REPO, "node_modules", dependency), join(modules, dependency));
    }
    main = join(root, "dist", "cli", "main.js");
  });
  after(() => rmSync(prefix, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { input: "", encoding: "utf8", timeout: 15_000 });

  it("guardian --redis: exit 78 and `npm i -g --prefix <prefix> redis`, no stack trace", () => {
    const rules = join(prefix, "rules.json");
    writeFileSync(rules, JSON.stringify({ default: "allow", rules: [] }));
    const result = run("guardian", "--rules", rules, "--port", "0", "--redis", "redis://127.0.0.1:1");
    assert.equal(result.status, 78, result.stderr);
    assert.equal(
      result.stderr,
      `acp-cancel guardian: --redis needs the optional package redis (missing); install with: npm i -g --prefix ${prefix} redis\n`,
    );
  });

  it("bridge --otel: tracing off, naming all four packages and the command; the bridge still runs", () => {
    const result = run("bridge", "--otel", "--", process.execPath, "-e", "");
    assert.equal(result.status, 0, result.stderr);
    const packages = "@opentelemetry/api @opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources";
    assert.match(result.stderr, /--otel: tracing is off: it needs the optional packages @opentelemetry\/api \(missing\), /);
    assert.match(result.stderr, /@opentelemetry\/resources \(missing\); install with/);
    assert.ok(result.stderr.includes(`install with: npm i -g --prefix ${prefix} ${packages}\n`), result.stderr);
  });
});
