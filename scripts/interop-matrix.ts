// docs/interop.md's Stop matrix, made from `acp-cancel check --model-server --json` scorecards of
// today's agents (one column per agent, the same renderer as `check --markdown`), so the page
// shows what the product itself measures. The scorecards live in docs/interop/scorecards/.
//
//   npm run interop:matrix                     check every peer again (minutes each), then re-render
//   npm run interop:matrix -- codex-acp        check only these peers again, then re-render
//   npm run interop:matrix -- --from-json      only re-render docs/interop.md from the stored JSON
//
// test/packaging/interop-matrix.test.ts fails when the page and the stored JSON disagree.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { renderMarkdown } from "../src/check/render.js";
import type { Scorecard } from "../src/check/scorecard.js";
import { repositoryRoot } from "./count-exports.js";

export const SCORECARD_DIR = "docs/interop/scorecards";
export const MATRIX_PAGE = "docs/interop.md";
const BEGIN = "<!-- matrix:begin (npm run interop:matrix writes this table; do not edit it by hand) -->";
const END = "<!-- matrix:end -->";

/**
 * The interop suite's limits (test/interop/real-agents.test.ts): these agents take 10 s and more to
 * start on a busy machine, and a whole next turn must fit in the stop limit.
 */
const LIMITS = ["--start-limit-ms", "120000", "--stop-limit-ms", "15000"];

export interface Peer {
  /** The scorecard's file name, without `.json`. */
  readonly file: string;
  /** The package pinned in test/interop/peers/package.json, whose version the scorecard must show. */
  readonly pkg: string;
  /** The command, from test/interop/peers/node_modules/.bin. */
  readonly command: readonly string[];
  /** check's own flags for it (`--protocol v2`). */
  readonly checkArgs?: readonly string[];
}

/** Today's agents, in the matrix's column order. */
export const PEERS: readonly Peer[] = [
  { file: "codex-acp", pkg: "@agentclientprotocol/codex-acp", command: ["codex-acp"] },
  { file: "claude-agent-acp", pkg: "@agentclientprotocol/claude-agent-acp", command: ["claude-agent-acp"] },
  { file: "claude-agent-acp-v2", pkg: "@agentclientprotocol/claude-agent-acp", command: ["claude-agent-acp"], checkArgs: ["--protocol", "v2"] },
  { file: "gemini-cli", pkg: "@google/gemini-cli", command: ["gemini"] },
  { file: "qwen-code", pkg: "@qwen-code/qwen-code", command: ["qwen"] },
  { file: "opencode", pkg: "opencode-ai", command: ["opencode"] },
  { file: "copilot-cli", pkg: "@github/copilot", command: ["copilot"] },
];

function readScorecard(file: string): Scorecard {
  const card = JSON.parse(readFileSync(file, "utf8")) as Partial<Scorecard>;
  if (card.tool !== "acp-cancel check" || !Array.isArray(card.cells)) {
    throw new Error(`${file} is not a scorecard written by 'acp-cancel check --json'`);
  }
  return card as Scorecard;
}

/** The stored scorecards, in PEERS order; a peer without one (the v2 slot) has no column. */
export function storedScorecards(root: string): { peer: Peer; card: Scorecard }[] {
  return PEERS.map((peer) => ({ peer, path: join(root, SCORECARD_DIR, `${peer.file}.json`) }))
    .filter(({ path }) => existsSync(path))
    .map(({ peer, path }) => ({ peer, card: readScorecard(path) }));
}

/** The block between the markers: the matrix of the stored scorecards. */
export function renderMatrix(cards: readonly Scorecard[]): string {
  return `${BEGIN}\n\n${renderMarkdown(cards)}\n${END}`;
}

/** The block between the markers (markers included) as the page has it. */
export function matrixOnPage(page: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${MATRIX_PAGE} has no '${BEGIN}' … '${END}' block`);
  return page.slice(begin, end + END.length);
}

/**
 * How the matrix checks `peer` (node runs `cli`, check's JSON to `json`), and the environment with
 * the peers' bins first: test/interop/check-agrees.test.ts runs the same.
 */
export function checkRun(root: string, cli: string, peer: Peer, json: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const bin = join(root, "test/interop/peers/node_modules/.bin");
  if (!existsSync(bin)) throw new Error("the peers are not installed: npm run interop:install");
  const args = [cli, "check", "--model-server", ...LIMITS, ...(peer.checkArgs ?? []), "--json", json, "--", ...peer.command];
  return { args, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` } };
}

function checkAgain(root: string, peer: Peer): void {
  const json = join(root, SCORECARD_DIR, `${peer.file}.json`);
  mkdirSync(join(root, SCORECARD_DIR), { recursive: true });
  process.stderr.write(`acp-cancel check --model-server -- ${peer.command.join(" ")} (${peer.file})\n`);
  const { args, env } = checkRun(root, join(root, "dist/cli/main.js"), peer, `${json}.partial`);
  const run = spawnSync(process.execPath, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
  // 0: every cell holds, 1: some cell is ✘ (the matrix shows it); 2: check cannot drive it (yet).
  if (run.status === 0 || run.status === 1) renameSync(`${json}.partial`, json);
  else rmSync(`${json}.partial`, { force: true });
  if (run.status === 2) process.stderr.write(`  ${peer.file}: check refused it (exit 2), no column\n`);
  else if (run.status !== 0 && run.status !== 1) throw new Error(`check of ${peer.file} failed: exit ${run.status ?? run.signal}`);
}

function main(): void {
  const root = repositoryRoot();
  const args = process.argv.slice(2);
  const fromJson = args.includes("--from-json");
  const named = args.filter((arg) => arg !== "--from-json");
  const unknown = named.filter((name) => !PEERS.some((peer) => peer.file === name));
  if (unknown.length > 0) throw new Error(`unknown peer ${unknown.join(", ")}; the peers: ${PEERS.map((peer) => peer.file).join(", ")}`);
  if (!fromJson) for (const peer of PEERS.filter((p) => named.length === 0 || named.includes(p.file))) checkAgain(root, peer);
  const pagePath = join(root, MATRIX_PAGE);
  const page = readFileSync(pagePath, "utf8");
  const matrix = renderMatrix(storedScorecards(root).map(({ card }) => card));
  writeFileSync(pagePath, page.replace(matrixOnPage(page), () => matrix));
  process.stderr.write(`${MATRIX_PAGE}: matrix of ${storedScorecards(root).length} scorecards written\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
