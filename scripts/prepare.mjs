// npm's `prepare`: builds dist/ so that installing from a git URL gives a working package.
// npm also runs it on `npm ci`, `npm install` in this repository, `npm pack` and `npm publish`.
// It does nothing under `npm ci` (CI and fresh clones run `npm run build` right after) and under
// pack/publish (`prepack` has just built dist/): nothing is compiled twice.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

if (["ci", "pack", "publish"].includes(process.env.npm_command ?? "")) process.exit(0);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const { status } = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { stdio: "inherit" });
process.exit(status ?? 1);
