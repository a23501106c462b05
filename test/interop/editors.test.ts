/**
 * docs/editors.md's acpx lines, run as written: acpx with `acp-cancel bridge -- codex-acp` (and
 * claude-agent-acp) as its agent, against the scripted model. The names in the doc are resolved
 * to the installed files; nothing else of the line changes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI } from "../support/bridge-harness.js";
import { exitAfterOutput } from "../support/spawn-peer.js";
import { killAll, processesWith, sealedEnv, until, within } from "./harness.js";
import { startModelServer } from "../../src/check/index.js";
import { claude, codex, PEERS_INSTALLED, PEERS_NOTE, peerFile, RUN_SLOW, SLOW_NOTE } from "./peers.js";

const EDITORS_MD = fileURLToPath(new URL("../../../docs/editors.md", import.meta.url));

/** The `acpx …` lines of the page's sh blocks. */
function acpxLines(): string[] {
  const page = readFileSync(EDITORS_MD, "utf8");
  const blocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks.flatMap((block) => block.split("\n")).filter((line) => line.startsWith("acpx "));
}

/** A line's words as a POSIX shell splits them (single quotes only, as the page uses). */
const words = (line: string) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? "");

/** The installed file for each command name the page uses. */
function resolveCommand(name: string): string[] {
  if (name === "acp-cancel") return [process.execPath, CLI];
  if (name === "codex-acp") return [codex.agent.command, ...codex.agent.args];
  if (name === "claude-agent-acp") return [claude.agent.command, ...claude.agent.args];
  throw new Error(`docs/editors.md names a command the test does not know: ${name}`);
}

function acpxBin(): string {
  const dir = peerFile("acpx/package.json").replace(/package\.json$/, "");
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin: string | Record<string, string> };
  return join(dir, typeof pkg.bin === "string" ? pkg.bin : (pkg.bin.acpx as string));
}

const cell = !PEERS_INSTALLED
  ? (title: string, fn: () => Promise<void>) => it.skip(title + PEERS_NOTE, fn)
  : RUN_SLOW ? it : (title: string, fn: () => Promise<void>) => it.skip(title + SLOW_NOTE, fn);

describe("docs/editors.md: the acpx configurations, run as written", function () {
  this.timeout(90_000);
  const lines = acpxLines();

  it("the page has an acpx line for each agent", () => {
    assert.equal(lines.length, 2, lines.join("\n"));
    assert.ok(lines.some((l) => l.includes("-- codex-acp'")) && lines.some((l) => l.includes("-- claude-agent-acp'")));
  });

  for (const line of lines) {
    cell(`${line}: exit 0, the model's answer printed`, async () => {
      const model = await startModelServer();
      model.script = { kind: "finish", text: "hello from the scripted model" };
      const { env, home, marker } = sealedEnv(model);
      try {
        const [, ...args] = words(line);
        const agentAt = args.indexOf("--agent") + 1;
        args[agentAt] = (args[agentAt] ?? "").split(" ").flatMap((w) => (/^[a-z][a-z-]*$/.test(w) && w !== "bridge" ? resolveCommand(w) : [w])).join(" ");
        const child = spawn(process.execPath, [acpxBin(), ...args], { env, cwd: home, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
        // Its output is matched once read to the end: 'exit' can come before its last lines are read.
        const exit = await within(exitAfterOutput(child, [child.stdout, child.stderr]).then(({ code }) => code), 60_000);
        assert.equal(exit, 0, out.slice(-800));
        assert.match(out, /hello from the scripted model/);
        assert.ok(model.turns.length > 0, "the turn went to the model");
        await until(() => (processesWith(marker).length === 0 ? true : undefined), "no process left", 8000).catch(() => undefined);
        assert.deepEqual(processesWith(marker), [], "nothing left running");
      } finally {
        killAll(marker);
        await model.close();
      }
    });
  }
});
