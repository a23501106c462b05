// npm's `prepare`: builds dist/ so that installing from a git URL gives a working package.
// It also runs on `npm ci` and a plain `npm install` in this repository; `npm ci` (CI and fresh
// clones) skips it because `npm run build` follows anyway, which keeps CI from compiling twice.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

if (process.env.npm_command === "ci") process.exit(0);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const { status } = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { stdio: "inherit" });
process.exit(status ?? 1);
