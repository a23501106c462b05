import assert from "node:assert/strict";
import { readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { crossOutputFiles, writeOutput } from "../../examples/cross-protocol/output-files.js";
import { scratchDir } from "../support/bridge-harness.js";

describe("demo:cross writes its files into a private directory of its own", () => {
  it("each run gets a fresh 0700 directory under the temp dir; its files are 0600, whatever the umask", () => {
    const first = crossOutputFiles([]);
    const second = crossOutputFiles([]);
    const previous = process.umask(0);
    try {
      for (const files of [first, second]) {
        const dir = dirname(files.trace);
        assert.equal(dirname(dir), tmpdir());
        assert.equal(statSync(dir).mode & 0o777, 0o700, dir);
        assert.deepEqual([files.spans, files.otlp].map(dirname), [dir, dir]);
        writeOutput(files.trace, "{}\n");
        assert.equal(statSync(files.trace).mode & 0o777, 0o600);
      }
      assert.notEqual(dirname(first.trace), dirname(second.trace));
    } finally {
      process.umask(previous);
      for (const files of [first, second]) {
        if (dirname(files.trace) !== tmpdir()) rmSync(dirname(files.trace), { recursive: true, force: true });
        else rmSync(files.trace, { force: true });
      }
    }
  });

  it("--trace FILE is the user's choice: the spans and exports go beside it, private too", () => {
    const trace = join(scratchDir(), "run.trace.jsonl");
    const files = crossOutputFiles(["--trace", trace]);
    assert.deepEqual(files, { trace, spans: trace.replace(".trace.jsonl", ".spans.jsonl"), otlp: trace.replace(".trace.jsonl", ".otlp.jsonl") });
    writeOutput(files.otlp, "x\n");
    assert.equal(readFileSync(files.otlp, "utf8"), "x\n");
    assert.equal(statSync(files.otlp).mode & 0o777, 0o600);
  });
});
