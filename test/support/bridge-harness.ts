import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TraceEntry, TraceHop } from "../../src/bridge/trace-writer.js";
import { fixturePath, type SpawnedPeer, spawnNode } from "./spawn-peer.js";

export const CLI = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

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
  const traceFile = join(mkdtempSync(join(tmpdir(), "acp-cancel-")), "trace.jsonl");
  const peer = spawnNode([
    ...(extra.nodeArgs ?? []),
    CLI,
    "bridge",
    "--trace",
    traceFile,
    ...bridgeArgs,
    "--",
    process.execPath,
    fixturePath(fixture),
    ...agentArgs,
  ], extra.env);
  const trace = () =>
    readFileSync(traceFile, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as TraceEntry];
        } catch {
          return []; // the last line may be half-written while the bridge runs
        }
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
  bridge.child.stdin.end();
  const timer = setTimeout(() => bridge.child.kill("SIGKILL"), 10_000);
  const exit = await bridge.exited;
  clearTimeout(timer);
  return exit;
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
