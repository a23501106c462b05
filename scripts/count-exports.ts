// Counts the public names of each entry of package.json "exports", read with TypeScript's own
// checker from the built declarations (dist/**/*.d.ts), or from the sources they are built from.
//
//   npx tsc -p tsconfig.json && npx tsc -p tsconfig.test.json && node build/scripts/count-exports.js [--src] [--names]
//
// A name counts once per entry whether it is a value, a type or both (a class is both).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export interface EntryCount {
  /** The specifier users import: "acp-cancel", "acp-cancel/rap", … */
  specifier: string;
  file: string;
  names: string[];
}

/** Where the declarations come from: the built dist/, or the sources tsc builds it from. */
export type CountSource = "dist" | "src";

interface PackageJson {
  name: string;
  exports: Record<string, string | { types?: string }>;
}

/** The repository root, found upward from this file (it runs from scripts/ or build/scripts/). */
export function repositoryRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (!existsSync(join(dir, "package.json")) || existsSync(join(dir, "tsconfig.base.json")) === false) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json with tsconfig.base.json above ${from}`);
    dir = parent;
  }
  return dir;
}

/** dist/rap/index.d.ts → src/rap/index.ts */
function sourceOf(declaration: string): string {
  return declaration.replace(/^\.\/dist\//, "./src/").replace(/\.d\.ts$/, ".ts");
}

export function countExports(source: CountSource = "dist", root: string = repositoryRoot()): EntryCount[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const entries = Object.entries(pkg.exports).flatMap(([key, target]) => {
    const types = typeof target === "string" ? undefined : target.types;
    if (types === undefined) return []; // ./package.json
    const file = resolve(root, source === "dist" ? types : sourceOf(types));
    if (!existsSync(file)) throw new Error(`${file} is missing${source === "dist" ? " (build dist/ first: npx tsc -p tsconfig.json)" : ""}`);
    return [{ specifier: pkg.name + key.slice(1), file }];
  });
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    },
  );
  const checker = program.getTypeChecker();
  return entries.map(({ specifier, file }) => {
    const sourceFile = program.getSourceFile(file);
    const symbol = sourceFile === undefined ? undefined : checker.getSymbolAtLocation(sourceFile);
    if (symbol === undefined) throw new Error(`${file} is not a module`);
    const names = checker.getExportsOfModule(symbol).map((exported) => exported.name).sort();
    return { specifier, file, names };
  });
}

function main(): void {
  const args = process.argv.slice(2);
  const counts = countExports(args.includes("--src") ? "src" : "dist");
  const width = Math.max(...counts.map((entry) => entry.specifier.length));
  for (const entry of counts) {
    console.log(`${entry.specifier.padEnd(width)}  ${String(entry.names.length).padStart(3)}`);
    if (args.includes("--names")) console.log(`  ${entry.names.join(", ")}`);
  }
  const total = counts.reduce((sum, entry) => sum + entry.names.length, 0);
  console.log(`${"total".padEnd(width)}  ${String(total).padStart(3)} (${new Set(counts.flatMap((entry) => entry.names)).size} distinct)`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
