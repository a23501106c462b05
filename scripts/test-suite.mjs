// Runs test suites by name over the compiled tests in build/test (build first: npm run build:test).
//   node scripts/test-suite.mjs fast            what `npm test` runs: every test file no excluding suite lists
//   node scripts/test-suite.mjs process browser one or more suites of test/suites.mjs, in turn
//   node scripts/test-suite.mjs slow            every suite but fast, in turn
//   node scripts/test-suite.mjs all             fast, then every suite
//   node scripts/test-suite.mjs --list fast     prints the files of a suite instead of running them
//   node scripts/test-suite.mjs fast -- --reporter dot   passes what follows "--" to mocha
// A suite with no compiled files (replicas, before its first test) says so and passes; a suite
// that names a file which does not exist fails, so a renamed test is never dropped in silence.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { ALL, SUITES } from "../test/suites.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const sourceTests = join(root, "test");
const builtTests = join(root, "build", "test");
// Two files at a time: most of a test's time is spent waiting on a process, a socket or a timer.
const FAST = { about: "every test file no excluding suite lists (npm test)", timeoutMs: 60_000, env: {}, jobs: 2 };

/** Test files under `dir`, as paths relative to test/ with "/" separators. */
function testFiles(dir, extension) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map((file) => String(file).split(sep).join("/"))
    // Installed packages (the interop peers' own install) are not our tests.
    .filter((file) => file.endsWith(`.test${extension}`) && !file.split("/").includes("node_modules"))
    .sort();
}

const matches = (file, path) => (path.endsWith("/") ? file.startsWith(path) : file === path);

/** Every listed path must name a test source (a folder may be empty): a typo or a rename fails loudly. */
function checkPaths() {
  const sources = testFiles(sourceTests, ".ts");
  const problems = [];
  for (const [name, suite] of Object.entries(SUITES)) {
    for (const path of suite.paths) {
      if (!path.endsWith("/") && !sources.includes(path)) problems.push(`${name}: test/${path} does not exist`);
    }
  }
  if (problems.length > 0) {
    console.error(`test/suites.mjs lists files that are not there:\n  ${problems.join("\n  ")}`);
    process.exit(2);
  }
}

function filesOf(name) {
  // Compiled tests whose source is gone (deleted or renamed since the last build) are not run.
  const sources = new Set(testFiles(sourceTests, ".ts"));
  const built = testFiles(builtTests, ".js").map((file) => file.replace(/\.js$/, ".ts")).filter((file) => sources.has(file));
  if (name === "fast") {
    const excluded = Object.values(SUITES).filter((suite) => suite.excludeFromFast).flatMap((suite) => suite.paths);
    return built.filter((file) => !excluded.some((path) => matches(file, path)));
  }
  return built.filter((file) => SUITES[name].paths.some((path) => matches(file, path)));
}

/** How much of a suite's report is kept for the recap (mocha prints its failures last). */
const RECAP_BYTES = 64 * 1024;
const recaps = [];

const mocha = createRequire(import.meta.url).resolve("mocha/bin/mocha.js");

async function run(name, mochaArgs) {
  const suite = name === "fast" ? FAST : SUITES[name];
  const files = filesOf(name);
  if (files.length === 0) {
    console.log(`\n[test:${name}] no compiled test files for ${suite.paths?.join(", ") ?? "test/"}: nothing to run`);
    return 0;
  }
  console.log(`\n[test:${name}] ${files.length} files: ${suite.about}`);
  const args = [
    mocha,
    "--no-config",
    "--timeout",
    String(suite.timeoutMs),
    "--require",
    join(builtTests, "support", "temp-root.js"),
    ...(suite.jobs > 1 ? ["--parallel", "--jobs", String(suite.jobs)] : []),
    ...mochaArgs,
    ...files.map((file) => relative(root, join(builtTests, file.replace(/\.ts$/, ".js")))),
  ];
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ["inherit", "pipe", "inherit"],
    env: { ...process.env, ...suite.env },
  });
  // mocha's report passes through as it comes; its "N failing" part is kept to be printed again
  // at the very end, where a CI log's tail (all some CI views show) still names what failed.
  let report = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    process.stdout.write(chunk);
    report = (report + chunk).slice(-RECAP_BYTES);
  });
  const [code, signal] = await once(child, "close");
  if (code !== 0) {
    const failing = report.search(/^ {2}\d+ failing/m);
    recaps.push(`[test:${name}] exit ${code ?? signal}\n${failing === -1 ? report.slice(-4_000) : report.slice(failing)}`);
  }
  return code ?? 1;
}

const split = process.argv.indexOf("--", 2);
const argv = process.argv.slice(2, split === -1 ? undefined : split);
const mochaArgs = split === -1 ? [] : process.argv.slice(split + 1);
const list = argv[0] === "--list";
const expand = (name) => (name === "all" ? ALL : name === "slow" ? ALL.filter((each) => each !== "fast") : [name]);
const names = (list ? argv.slice(1) : argv).flatMap(expand);
const unknown = names.filter((name) => name !== "fast" && !(name in SUITES));
if (names.length === 0 || unknown.length > 0) {
  console.error(`usage: test-suite.mjs [--list] <fast|${Object.keys(SUITES).join("|")}|slow|all>...` +
    (unknown.length > 0 ? `\nunknown suite: ${unknown.join(", ")}` : ""));
  process.exit(2);
}
checkPaths();
if (list) {
  for (const name of names) console.log(filesOf(name).map((file) => `${name}\ttest/${file}`).join("\n"));
  process.exit(0);
}
const notBuilt = testFiles(sourceTests, ".ts").filter((file) => !existsSync(join(builtTests, file.replace(/\.ts$/, ".js"))));
if (notBuilt.length > 0) {
  // tsc -b does not notice a deleted output; a test must never be skipped because of it.
  console.error(`not compiled: test/${notBuilt.join(", test/")}\nrun npm run build:test (or npx tsc -b tsconfig.test.json --force if it says up to date)`);
  process.exit(2);
}
const failed = [];
for (const name of names) if ((await run(name, mochaArgs)) !== 0) failed.push(name);
if (failed.length > 0) {
  console.error(`\n\nrecap of the failures:\n${recaps.join("\n")}`);
  console.error(`\nfailed: ${failed.map((name) => `test:${name}`).join(", ")}`);
  process.exit(1);
}
