import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { repositoryRoot } from "../../scripts/count-exports.js";
import { exitAfterOutput } from "../support/spawn-peer.js";
import { snippetsOf, typeCheck, writeResolveHook, writeSnippets } from "./doc-snippets.js";
import { anchors, links, wordCount } from "./markdown.js";

// Issue 36: docs a user reads. Issue 37: snippets that compile and run, a package that says where it lives.
const README_MAX_WORDS = 1_500;
const PAGE_MAX_WORDS = 3_000;
/** The maintainers' log: in the repository, not in the package, and no page a user reads. */
const MAINTAINER_PAGES = ["docs/decisions.md", "docs/bench-before-after.md"];
/** Where a page links to what only the repository holds (the log, tests): by this URL, not a relative path. */
const REPOSITORY_BLOB = "https://github.com/acp-cancel/acp-cancel/blob/main/";

const root = repositoryRoot();
const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const userPages = pages.filter((page) => !MAINTAINER_PAGES.includes(page));
const text = (page: string) => readFileSync(join(root, page), "utf8");

let packed: string[] | undefined;
/** What `npm pack` would put in the tarball, as repository paths (dist/ only as far as it is built). */
function packedFiles(): string[] {
  packed ??= dryRunPack();
  return packed;
}

function dryRunPack(): string[] {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const run = spawnSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const [pack] = JSON.parse(run.stdout) as [{ files: { path: string }[] }];
  return pack.files.map((file) => file.path);
}

describe("docs a user reads", () => {
  it(`README.md has at most ${README_MAX_WORDS} words and each user page in docs/ at most ${PAGE_MAX_WORDS}`, () => {
    const over = userPages
      .map((page) => ({ page, words: wordCount(text(page)), max: page === "README.md" ? README_MAX_WORDS : PAGE_MAX_WORDS }))
      .filter(({ words, max }) => words > max)
      .map(({ page, words, max }) => `${page}: ${words} words (at most ${max})`);
    assert.deepEqual(over, []);
  });

  it("every link resolves: relative ones to a file the package ships (and its heading), repository ones to a file in the repository", () => {
    const shipped = new Set(packedFiles());
    const broken: string[] = [];
    for (const page of pages) {
      for (const { target, line } of links(text(page))) {
        const at = `${page}:${line}: ${target}`;
        const [path = "", anchor] = target.split("#");
        let file: string;
        if (target.startsWith(REPOSITORY_BLOB)) file = path.slice(REPOSITORY_BLOB.length);
        else if (/^[a-z]+:/i.test(target)) continue;
        else if (path === "") file = page;
        else {
          file = normalize(join(dirname(page), path)).split("\\").join("/");
          // A page the package ships may link only to what the package ships.
          if (!MAINTAINER_PAGES.includes(page) && !shipped.has(file) && !file.startsWith("dist/")) {
            broken.push(`${at} (not in the package: link ${REPOSITORY_BLOB}${file} instead)`);
            continue;
          }
        }
        if (!existsSync(join(root, file))) broken.push(`${at} (no such file)`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchors(text(file)).has(anchor)) broken.push(`${at} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it("the package leaves out the maintainers' log, source maps, src/ and test/", () => {
    const unwanted = packedFiles().filter(
      (file) => MAINTAINER_PAGES.includes(file) || file.endsWith(".map") || file.startsWith("src/") || file.startsWith("test/"),
    );
    assert.deepEqual(unwanted, []);
  });

  it("no page a user reads sends them to open a file under test/", () => {
    // Naming a test that covers a behaviour is fine; a fixture to open or copy is linked in the repository, or inlined.
    const told = userPages.flatMap((page) =>
      text(page)
        .split("\n")
        .map((line, index) => ({ line, at: `${page}:${index + 1}` }))
        .filter(({ line }) => /\btest\/fixtures\//.test(line.replace(/\[[^\]]*\]\(https:\/\/github\.com\/[^)]*\)/g, "")))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    assert.deepEqual(told, []);
  });

  it("package.json names the repository, and the README says how to clone it", () => {
    const manifest = JSON.parse(text("package.json")) as { repository?: { url?: string } };
    assert.equal(manifest.repository?.url, "git+https://github.com/acp-cancel/acp-cancel.git");
    assert.match(text("README.md"), /git clone https:\/\/github\.com\/acp-cancel\/acp-cancel\.git/);
    assert.equal(text("README.md").match(/\bnpm ci\b/g)?.length, 1, "a reader runs npm ci once");
    assert.match(text(".gitignore"), /^\*\.tgz$/m, "npm pack's tarball is not left untracked");
  });

  describe("TypeScript blocks", () => {
    let dir: string;
    const snippets = snippetsOf(root, pages);
    before(() => {
      dir = mkdtempSync(join(tmpdir(), "acp-cancel-doc-snippets-"));
      writeSnippets(root, dir, snippets);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("every block not marked `ts fragment` type-checks under --strict (one program for all blocks)", function () {
      this.timeout(180_000); // one program over the blocks and the source they import; the limit only catches a hang
      assert.ok(snippets.length >= 20, `found only ${snippets.length} checked blocks`);
      assert.deepEqual(typeCheck(dir, snippets), []);
    });

    it("the README's embedded agent runs: session/cancel ends its turn cancelled and it leaves when stdin closes", async function () {
      this.timeout(60_000);
      const [agent] = snippets.filter((snippet) => snippet.run && snippet.where.startsWith("README.md"));
      assert.ok(agent !== undefined, "the README has a `ts run` block");
      const js = join(dir, agent.file.replace(/\.ts$/, ".mjs"));
      transpileTo(agent.code, js);
      const child = spawn(process.execPath, ["--import", writeResolveHook(root, dir), js], { stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const cancelled = new Promise<void>((resolve) => {
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes("session/request_permission")) child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s1" } })}\n`);
          if (/"stopReason":"cancelled"/.test(stdout)) resolve();
        });
      });
      for (const [id, method, params] of [
        [1, "initialize", { protocolVersion: 1, clientCapabilities: {} }],
        [2, "session/new", { cwd: root, mcpServers: [] }],
        [3, "session/prompt", { sessionId: "s1", prompt: [{ type: "text", text: "edit a.ts" }] }],
      ] as const) {
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      }
      await cancelled;
      child.stdin.end();
      const { code } = await exitAfterOutput(child, [child.stdout, child.stderr]);
      assert.equal(code, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`);
      assert.equal(stderr, "");
    });
  });
});

/** Type-stripped JavaScript of a block (its types are checked by the test above), written to `file`. */
function transpileTo(code: string, file: string): void {
  const options = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 };
  writeFileSync(file, ts.transpileModule(code, { compilerOptions: options }).outputText);
}
