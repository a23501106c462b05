import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rmSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { escapeControl } from "../../src/wire/index.js";
import { CLI } from "../support/bridge-harness.js";
import { HANG_LIMIT_MS } from "../support/wire-assertions.js";

/** Any control character but the newline that ends each output line. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const ESC = "\u001b";
const BEL = "\u0007";

describe("acp-cancel trace: what peers sent never reaches the terminal raw", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-cancel-escape-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: HANG_LIMIT_MS });

  /** A bridge trace and a cross-protocol one, each with ESC, BEL, CSI, C1 and a bidi override in peer strings. */
  const hostile = `${ESC}]0;owned${BEL}${ESC}[2J\u009b31m\u202e`;
  const bridgeTrace = [
    { t: 1, hop: "editor->bridge", message: { jsonrpc: "2.0", id: `x${hostile}`, method: `session/prompt${hostile}` } },
    { t: 2, hop: "agent->bridge", message: { jsonrpc: "2.0", id: 1, error: { code: `${hostile}` } } },
    { t: 3, note: JSON.stringify({ type: "problem", side: "agent", detail: `bad${hostile}\nline` }) },
    { t: 4, note: `plain note${hostile}` },
  ];
  const crossTrace = [
    { t: 1, hop: "agent->mcp-server", protocol: "mcp", label: `tools/call${hostile}` },
    { t: 2, note: `n${hostile}`, party: `agent${hostile}` },
  ];

  for (const [name, entries] of [["bridge", bridgeTrace], ["cross-protocol", crossTrace]] as const) {
    for (const extra of [[], ["--mermaid"]]) {
      it(`a ${name} trace, ${extra.length === 0 ? "timeline" : "mermaid"}: control characters are escaped`, () => {
        const file = join(dir, `${name}.jsonl`);
        writeFileSync(file, `${entries.map((entry) => JSON.stringify(entry)).join("\n")}\n`);
        const result = run("trace", file, ...extra);
        assert.equal(result.status, 0, result.stderr);
        assert.doesNotMatch(result.stdout, RAW_CONTROL);
        // mermaid turns ";" into ",": either is fine.
        assert.match(result.stdout, /\\x1b\]0[;,]owned\\x07\\x1b\[2J\\x9b31m\\u\{202e\}/);
      });
    }
  }

  it("an error naming a bad line escapes it too", () => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, `not json ${ESC}[31m red\n`);
    const result = run("trace", file);
    assert.equal(result.status, 65);
    assert.doesNotMatch(result.stderr.replace(/\n/g, ""), RAW_CONTROL);
    assert.match(result.stderr, /not json \\x1b\[31m red/);
  });

  it("escapeControl leaves ordinary text, arrows and non-Latin letters alone", () => {
    assert.equal(escapeControl("editor → bridge · résumé 日本"), "editor → bridge · résumé 日本");
    assert.equal(escapeControl("a\tb\nc\u0000"), "a\\x09b\\x0ac\\x00");
  });
});
