// docs/interop.md's Stop matrix from `acp-cancel check --json` scorecards: one column per agent,
// one row per scenario, each cell "D ✔ 12 ms · B ✔ 3 ms" (the same renderer as `check --markdown`).
//
//   acp-cancel check --model-server --json codex.json -- codex-acp      (one per agent)
//   npm run build:test && node build/scripts/interop-matrix.js codex.json claude.json … > matrix.md
import { readFileSync } from "node:fs";
import { renderMarkdown } from "../src/check/render.js";
import type { Scorecard } from "../src/check/scorecard.js";

function read(file: string): Scorecard {
  const card = JSON.parse(readFileSync(file, "utf8")) as Partial<Scorecard>;
  if (card.tool !== "acp-cancel check" || !Array.isArray(card.cells)) {
    throw new Error(`${file} is not a scorecard written by 'acp-cancel check --json'`);
  }
  return card as Scorecard;
}

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write("usage: node build/scripts/interop-matrix.js SCORECARD.json...\n");
  process.exit(2);
}
process.stdout.write(renderMarkdown(files.map(read)));
