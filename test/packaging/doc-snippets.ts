/**
 * The TypeScript blocks of README.md and docs/*.md, written out as modules and type-checked in one
 * TypeScript program under --strict, against the package's own source (`acp-cancel` and its entries
 * map to src/, so the check needs no dist/ build and never sees stale types). Only the blocks are
 * checked: src/ is checked by the build, and the checker reads of it only what the blocks use
 * (a whole `tsc -p` would check all of src/ a second time, about 20 s of CPU on a fresh clone).
 *
 * The info string says what a block is:
 * - "ts": a complete module; it must type-check as printed.
 * - "ts fragment": an excerpt (a signature list, a few lines of a larger handler); not checked.
 * - "ts run": complete, and also run to its end by node (imports of acp-cancel resolve to build/src).
 * An excerpt that only assumes a few names (a task id, a logger) stays checked: a one-line
 * `<!-- ts-context: declare const taskId: string; -->` just before its fence declares them.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
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
    paths: { "acp-cancel": [join(root, "src/index.ts")], "acp-cancel/*": [join(root, "src/*/index.ts")] },
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: snippets.map((s) => s.file) }, null, 2));
}

/**
 * The compiler's complaints about the snippets, each with the page line it comes from: one program
 * from `dir/tsconfig.json` (what `tsc -p dir` would read), whose diagnostics are asked for the
 * snippet files only, plus the options' and the program's global ones.
 */
export function typeCheck(dir: string, snippets: readonly Snippet[]): string[] {
  const problems: ts.Diagnostic[] = [];
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic: ts.Diagnostic) => problems.push(diagnostic) };
  const config = ts.getParsedCommandLineOfConfigFile(join(dir, "tsconfig.json"), undefined, host);
  if (config === undefined) return problems.map((diagnostic) => render(diagnostic, new Map()));
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  problems.push(...config.errors, ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics());
  for (const snippet of snippets) {
    const file = program.getSourceFile(join(dir, snippet.file));
    if (file === undefined) throw new Error(`${snippet.where}: ${snippet.file} is not in the program`);
    problems.push(...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file));
  }
  const byFile = new Map(snippets.map((snippet) => [snippet.file, snippet]));
  return problems.map((diagnostic) => render(diagnostic, byFile));
}

/** "docs/rap.md:131: error TS2339: …" for a diagnostic in a snippet; tsc's own wording otherwise. */
function render(diagnostic: ts.Diagnostic, byFile: ReadonlyMap<string, Snippet>): string {
  const message = `error TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
  const { file, start } = diagnostic;
  if (file === undefined || start === undefined) return message;
  const { line } = file.getLineAndCharacterOfPosition(start);
  const snippet = byFile.get(basename(file.fileName));
  if (snippet === undefined) return `${file.fileName}(${line + 1}): ${message}`;
  const [page, fence] = snippet.where.split(":");
  return `${page}:${Number(fence) + line + 1}: ${message}`;
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
