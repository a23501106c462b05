/**
 * The TypeScript blocks of README.md and docs/*.md, written out as modules and type-checked with
 * one tsc run under --strict, against the package's own source (`acp-cancel` and its entries map
 * to src/, so the check needs no dist/ build and never sees stale types).
 *
 * The info string says what a block is:
 * - "ts": a complete module; it must type-check as printed.
 * - "ts fragment": an excerpt (a signature list, a few lines of a larger handler); not checked.
 * - "ts run": complete, and also run to its end by node (imports of acp-cancel resolve to build/src).
 * An excerpt that only assumes a few names (a task id, a logger) stays checked: a one-line
 * `<!-- ts-context: declare const taskId: string; -->` just before its fence declares them.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { codeBlocks } from "./markdown.js";

export interface Snippet {
  /** Where it is printed, e.g. "docs/rap.md:120". */
  where: string;
  /** Its file name in the work directory. */
  file: string;
  run: boolean;
  code: string;
}

const TS = new Set(["ts", "typescript"]);

export function snippetsOf(root: string, pages: readonly string[]): Snippet[] {
  const snippets: Snippet[] = [];
  for (const page of pages) {
    for (const block of codeBlocks(readFileSync(join(root, page), "utf8"))) {
      const [language, kind] = block.info.split(/\s+/);
      if (!TS.has(language ?? "") || kind === "fragment") continue;
      const file = `${basename(page, ".md")}-${block.line}.ts`;
      // A block without import or export is a script to tsc; make it a module like the rest.
      const isModule = /^\s*(import|export)\s/m.test(block.code);
      // The context goes after the code, so that tsc's line numbers are the page's.
      const code = [block.code, block.context, isModule ? "" : "export {};"].filter(Boolean).join("\n");
      snippets.push({ where: `${page}:${block.line}`, file, run: kind === "run", code });
    }
  }
  return snippets;
}

/** Writes the snippets and a tsconfig into `dir`; node_modules points at the repository's. */
export function writeSnippets(root: string, dir: string, snippets: readonly Snippet[]): void {
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n'); // top-level await, as in an ESM project
  for (const snippet of snippets) writeFileSync(join(dir, snippet.file), `${snippet.code}\n`);
  const compilerOptions = {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2023", "DOM"],
    types: ["node"],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    // The source the blocks import is checked once and remembered; a later run checks the blocks.
    incremental: true,
    tsBuildInfoFile: join(root, "build", "doc-snippets.tsbuildinfo"),
    paths: { "acp-cancel": [join(root, "src/index.ts")], "acp-cancel/*": [join(root, "src/*/index.ts")] },
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: snippets.map((s) => s.file) }, null, 2));
}

/** tsc's complaints about the snippets, each with the page line it comes from. */
export function typeCheck(root: string, dir: string, snippets: readonly Snippet[]): string[] {
  const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json"), "--pretty", "false"], { encoding: "utf8" });
  const byFile = new Map(snippets.map((snippet) => [snippet.file, snippet]));
  return `${result.stdout}${result.stderr}`
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const at = /^(.*?\.ts)\((\d+),\d+\): (.*)$/.exec(line);
      const snippet = at === null ? undefined : byFile.get(basename(at[1] ?? ""));
      if (at === null || snippet === undefined) return line;
      const [page, fence] = snippet.where.split(":");
      return `${page}:${Number(fence) + Number(at[2])}: ${at[3]}`;
    });
}

/** Makes `dir/register.mjs`, for `node --import`: `acp-cancel[/entry]` loads build/src[/entry]/index.js. */
export function writeResolveHook(root: string, dir: string): string {
  const built = pathToFileURL(join(root, "build", "src")).href;
  writeFileSync(
    join(dir, "hooks.mjs"),
    `export async function resolve(specifier, context, next) {
  const entry = /^acp-cancel(\\/.*)?$/.exec(specifier);
  return next(entry ? ${JSON.stringify(built)} + (entry[1] ?? "") + "/index.js" : specifier, context);
}\n`,
  );
  writeFileSync(join(dir, "register.mjs"), "import { register } from \"node:module\";\nregister(\"./hooks.mjs\", import.meta.url);\n");
  return join(dir, "register.mjs");
}
