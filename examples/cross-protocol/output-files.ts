import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where the demo writes its trace, its spans and the raw OTLP exports. */
export interface CrossOutputFiles {
  trace: string;
  spans: string;
  otlp: string;
}

/**
 * `--trace FILE` and its siblings, or files in a fresh directory of this run's own (mkdtemp: mode
 * 0700, a name nobody can plant a link at beforehand): a trace holds the whole session.
 */
export function crossOutputFiles(argv: readonly string[]): CrossOutputFiles {
  const index = argv.indexOf("--trace");
  const trace =
    index === -1 ? join(mkdtempSync(join(tmpdir(), "acp-cancel-cross-")), "cross.trace.jsonl") : (argv[index + 1] ?? "");
  const stem = trace.replace(/(\.trace)?\.jsonl$/, "");
  return { trace, spans: `${stem}.spans.jsonl`, otlp: `${stem}.otlp.jsonl` };
}

/** Writes one of those files, readable by its owner only (a file that exists keeps its mode). */
export function writeOutput(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
}
