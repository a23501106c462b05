/**
 * Loaded by every suite (mocha --require, see scripts/test-suite.mjs): the run gets its own temp
 * directory, and TMPDIR points there for the tests and every process they spawn (os.tmpdir() reads
 * it on each call). At the end the directory is removed with everything in it, so no run leaves
 * anything in the machine's temp dir; in a parallel run the main process makes and removes it, and
 * its workers share it. What tests forgot to remove themselves is named first, so
 * the leak is seen and fixed where it is made.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Set by the process that made the run's directory; a parallel run's workers inherit it and share the directory. */
const SHARED = "ACP_CANCEL_TEST_RUN_DIR";
const owner = process.env[SHARED] === undefined;
const runDir = process.env[SHARED] ?? mkdtempSync(join(tmpdir(), "acp-cancel-test-run-"));
process.env[SHARED] = runDir;
process.env.TMPDIR = runDir;

/** "acp-cancel-x1Y2z3" → "acp-cancel-*": leftovers counted by the prefix that names their maker. */
function kind(name: string): string {
  return name.replace(/[-_.]?[A-Za-z0-9]{6}$/, "-*");
}

export function mochaGlobalTeardown(): void {
  if (!owner) return;
  const left = readdirSync(runDir);
  if (left.length > 0) {
    const counts = new Map<string, number>();
    for (const name of left) counts.set(kind(name), (counts.get(kind(name)) ?? 0) + 1);
    const summary = [...counts].map(([name, count]) => `${name} x${count}`).join(", ");
    console.log(`  [temp] tests left ${left.length} entries in the temp dir (removed now): ${summary}`);
  }
  rmSync(runDir, { recursive: true, force: true });
}
