import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { countExports, type EntryCount, repositoryRoot } from "../../scripts/count-exports.js";

// The budget of issue 24: a root a user reads in one go, and a small API overall.
const ROOT_MAX = 20;
const TOTAL_MAX = 130;

/** The docs page whose "API" section lists each entry's names. */
const PAGE_OF: Record<string, string> = {
  "acp-cancel": "embedding.md",
  "acp-cancel/jsonrpc": "vscode-jsonrpc.md",
  "acp-cancel/bridge": "bridge.md",
  "acp-cancel/mcp": "cross-protocol.md",
  "acp-cancel/rap": "rap.md",
  "acp-cancel/a2a": "a2a.md",
  "acp-cancel/abp": "abp.md",
  "acp-cancel/abp/app": "abp.md",
  "acp-cancel/replicas": "scale-out.md",
  "acp-cancel/otel": "tracing.md",
};

/** The text of a page's API section: from its `## API` heading to the next `## ` heading or the end. */
function apiSection(page: string): string {
  const text = readFileSync(join(repositoryRoot(), "docs", page), "utf8");
  const start = text.lastIndexOf("\n## API\n");
  assert.ok(start >= 0, `docs/${page} has no "## API" section`);
  const rest = text.slice(start + 1);
  const end = rest.indexOf("\n## ", 1);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The part of a section about one entry: under its `### \`specifier\`` heading when the page has several. */
function entryPart(section: string, specifier: string): string {
  const heading = `\n### \`${specifier}\`\n`;
  const start = section.indexOf(heading);
  if (start < 0) return section;
  const rest = section.slice(start + heading.length);
  const end = rest.indexOf("\n### ");
  return end < 0 ? rest : rest.slice(0, end);
}

describe("the public API: few names, each documented", function () {
  this.timeout(120_000); // TypeScript's checker over src, on a loaded machine
  let counts: EntryCount[];
  before(() => {
    counts = countExports("src");
  });

  it("counts every entry of package.json exports (the count can fail: it sees the names)", () => {
    assert.deepEqual(counts.map((entry) => entry.specifier).sort(), Object.keys(PAGE_OF).sort());
    const root = counts.find((entry) => entry.specifier === "acp-cancel");
    for (const name of ["withCancellation", "ndJsonStream", "jobOf", "CancelEngine", "EngineOptions", "EngineEvent"]) {
      assert.ok(root?.names.includes(name), `the root exports ${name}`);
    }
  });

  it(`the root has at most ${ROOT_MAX} names, and all entries together at most ${TOTAL_MAX}`, () => {
    const root = counts.find((entry) => entry.specifier === "acp-cancel");
    assert.ok(root !== undefined);
    assert.ok(root.names.length <= ROOT_MAX, `the root exports ${root.names.length} names: ${root.names.join(", ")}`);
    const total = counts.reduce((sum, entry) => sum + entry.names.length, 0);
    const perEntry = counts.map((entry) => `${entry.specifier} ${entry.names.length}`).join(", ");
    assert.ok(total <= TOTAL_MAX, `all entries export ${total} names (${perEntry})`);
  });

  it("no internals leak: job tables, grace timers, line splitters, parse helpers, answer builders, method tables", () => {
    const internal = [
      "JobTable", "GraceTimers", "JobGrace", "RecentKeys", "LineSplitter", "NdjsonWriter", "parseJsonLine",
      "readNdjson", "cancelledAnswer", "abandonedAnswer", "Method", "CLEANUP_METHODS", "ErrorCode", "ERROR_CODES",
      "CANCEL_REASONS", "CANCEL_REASONS_TEXT", "CancelFanout", "EnvelopeChannel", "EnvelopeHost",
    ];
    for (const entry of counts) {
      const leaked = entry.names.filter((name) => internal.includes(name));
      assert.deepEqual(leaked, [], `${entry.specifier} exports internals`);
    }
  });

  it("each entry's docs page lists every name it exports in its API section", () => {
    for (const entry of counts) {
      const page = PAGE_OF[entry.specifier];
      assert.ok(page !== undefined, `${entry.specifier} has a docs page`);
      const part = entryPart(apiSection(page), entry.specifier);
      assert.ok(part.includes(`\`${entry.specifier}\``), `docs/${page}'s API section names ${entry.specifier}`);
      assert.ok(part.includes("```ts"), `docs/${page}'s API section has an example for ${entry.specifier}`);
      const missing = entry.names.filter((name) => !new RegExp(`\`${name}\\b`).test(part));
      assert.deepEqual(missing, [], `docs/${page} lists every name of ${entry.specifier}`);
    }
  });
});
