import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = fileURLToPath(new URL("../../src/mcp/", import.meta.url));

/** Every module specifier a compiled file imports or re-exports at run time. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s*["']([^"']+)["']/g)) {
    if (match[1] !== undefined) found.push(match[1]);
  }
  for (const match of source.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) {
    if (match[1] !== undefined) found.push(match[1]);
  }
  return found;
}

describe("acp-cancel/mcp layering", () => {
  it("loads nothing of @modelcontextprotocol/sdk (an optional peer) and imports only core and wire of ours", () => {
    const files = readdirSync(compiled).filter((name) => name.endsWith(".js"));
    assert.ok(files.length >= 4, `compiled files found in ${compiled}`);
    const imported = files.flatMap((name) => specifiers(readFileSync(compiled + name, "utf8")));
    assert.ok(imported.includes("../core/index.js"), "the check sees imports at all");
    // Core's internals (the call lifecycle) are imported by path, not through its public entry.
    const outside = imported.filter((s) => !s.startsWith("./") && !/^\.\.\/(core|wire)\/[\w-]+\.js$/.test(s));
    assert.deepEqual(outside, []);
  });
});
