import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Every module specifier a compiled file imports at run time (type-only imports are erased). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|^\s*import\s+"([^"]+)"/gm)].map(
    (m) => (m[1] ?? m[2]) as string,
  );
}

/** The bare packages reachable from `entry` through our own compiled files. */
function packagesReachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return packages;
}

const built = (path: string) => fileURLToPath(new URL(`../../src/${path}`, import.meta.url));

describe("@a2a-js/sdk stays an optional peer", () => {
  it("the package root and the CLI (bridge and guardian) never load it", () => {
    for (const entry of ["index.js", "cli/main.js"]) {
      const reached = [...packagesReachable(built(entry))].filter((p) => p.startsWith("@a2a-js/"));
      assert.deepEqual(reached, [], entry);
    }
  });

  it("acp-cancel/a2a loads only @a2a-js/sdk/errors at run time", () => {
    const all = packagesReachable(built("a2a/index.js"));
    assert.ok(all.has("zod") && all.has("node:http"), "the walk reaches the binding's own imports");
    assert.deepEqual([...all].filter((p) => p.startsWith("@a2a-js/")), ["@a2a-js/sdk/errors"]);
  });
});
