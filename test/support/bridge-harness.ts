import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TraceEntry, TraceHop } from "../../src/bridge/trace-writer.js";
import { ConformanceTracker, checkAfterTest } from "./schema-validator.js";
import { endAndAwaitExit, exitAfterOutput, fixturePath, type SpawnedPeer, spawnNode } from "./spawn-peer.js";
import { HANG_LIMIT_MS } from "./wire-assertions.js";

export const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

let scratch: string | undefined;
let traces = 0;

/**
 * One temp directory for everything the bridge tests write (traces, scripts), made on first use
 * and removed after the run's (or a parallel worker's file's) last test, or at exit.
 */
export function scratchDir(): string {
  if (scratch === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "acp-cancel-"));
    scratch = dir;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return scratch;
}

// A root hook: mocha runs it after the last test, before the run's temp dir is checked for leftovers.
// (The bench's real-agents scenario loads this outside mocha; the exit handler above cleans up there.)
if (typeof after === "function") {
  after(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
    scratch = undefined;
  });
}

export interface BridgeProcess extends SpawnedPeer {
  /** Messages the bridge traced on one hop, in order. */
  hop(hop: TraceHop): Record<string, unknown>[];
  trace(): TraceEntry[];
  traceFile: string;
}

/** Spawns `acp-cancel bridge [args] -- node <fixture> [agentArgs]` as a real process, tracing to a temp file. */
export function spawnBridge(
  bridgeArgs: string[],
  fixture: string,
  agentArgs: string[] = [],
  /** Node flags for the bridge process (e.g. `--import`), and extra environment. */
  extra: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): BridgeProcess {
  return spawnBridgeOver(bridgeArgs, [process.execPath, fixturePath(fixture), ...agentArgs], extra);
}

/** Spawns `acp-cancel bridge [args] -- <agent command...>` as a real process, tracing to a temp file. */
export function spawnBridgeOver(
  bridgeArgs: string[],
  agentCommand: string[],
  extra: { nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): BridgeProcess {
  const traceFile = join(scratchDir(), `trace-${++traces}.jsonl`);
  const peer = spawnNode(
    [...(extra.nodeArgs ?? []), CLI, "bridge", "--trace", traceFile, ...bridgeArgs, "--", ...agentCommand],
    extra.env,
  );
  // Before the bridge opened its trace there is nothing in it.
  const trace = () =>
    (existsSync(traceFile) ? readFileSync(traceFile, "utf8") : "")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as TraceEntry];
        } catch {
          return []; // the last line may be half-written while the bridge runs
        }
      });
  // A bridge that never started wrote no trace: nothing it wrote can be invalid.
  checkAfterTest(() => {
    if (existsSync(traceFile)) checkTrace(trace());
  });
  return {
    ...peer,
    trace,
    traceFile,
    hop: (hop) =>
      trace()
        .filter((entry) => entry.hop === hop)
        .map((entry) => entry.message as Record<string, unknown>),
  };
}

/** Ends the editor's side and waits for the bridge to exit (killing it if it hangs). */
export async function closeBridge(
  bridge: BridgeProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return endAndAwaitExit(bridge, HANG_LIMIT_MS);
}

/** True while `pid` runs. A zombie (dead, waiting to be reaped by init) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * Every message the bridge synthesised or rewrote (one it wrote that is not, verbatim, one it
 * read from the other end) must validate against the version's official schema.
 */
function checkTrace(entries: TraceEntry[]): void {
  const conformance = new ConformanceTracker("bridge trace");
  const read: Record<"client" | "agent", Set<string>> = { client: new Set(), agent: new Set() };
  for (const { hop, message } of entries) {
    if (hop === undefined || message === undefined) continue;
    const text = JSON.stringify(message);
    if (hop === "editor->bridge") {
      read.client.add(text);
      conformance.see("a", message, false);
    } else if (hop === "agent->bridge") {
      read.agent.add(text);
      conformance.see("b", message, false);
    } else if (hop === "bridge->agent") {
      // The editor's end is "a", the agent's "b"; what the bridge writes toward one end
      // stands in for the other end's words.
      conformance.see("a", message, !read.client.has(text));
    } else conformance.see("b", message, !read.agent.has(text));
  }
}

/** Runs `acp-cancel <args>` to its exit, collecting its stderr (stdin piped but never written, or ignored). */
export function runCli(
  args: string[],
  stdin: "ignore" | "pipe" = "ignore",
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: [stdin, "pipe", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Its last words may still be in the pipe at 'exit': resolve once stderr was read to its end.
    void exitAfterOutput(child, child.stderr === null ? [] : [child.stderr]).then(({ code }) => resolve({ code, stderr }));
  });
}
