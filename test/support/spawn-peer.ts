import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { MessageStream } from "../../src/index.js";
import { ConformanceTracker } from "./schema-validator.js";

/** Absolute path of a compiled fixture (tests run from build/test). */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}.js`, import.meta.url));
}

export interface SpawnedPeer {
  child: ChildProcessWithoutNullStreams;
  /** Bytes of the child's stdio, for an SDK ndJsonStream. */
  output: WritableStream<Uint8Array>;
  input: ReadableStream<Uint8Array>;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnFixture(name: string, args: string[] = []): SpawnedPeer {
  return spawnNode([fixturePath(name), ...args]);
}

/** Processes spawnNode started that have not exited yet. */
const running = new Set<ChildProcess>();

/**
 * After each test, SIGKILLs what it started and left running: a test that fails midway (an
 * assertion before its close) cannot leave a bridge or an agent behind. A root hook, only when
 * mocha loaded this module: fixtures, which run outside mocha, import it too.
 */
if (typeof afterEach === "function") {
  afterEach(function killLeftovers() {
    for (const child of running) {
      const name = String(child.spawnargs.slice(1, 3).map((arg) => arg.replace(/^.*\//, "")).join(" "));
      if (this.currentTest?.state === "passed") console.log(`      [leftover] a process the test did not end: ${name} (pid ${child.pid}), killed`);
      child.kill("SIGKILL");
    }
    running.clear();
  });
}

/** Runs `node <args>` with piped stdio, collecting its stderr. */
export function spawnNode(args: string[], env?: NodeJS.ProcessEnv): SpawnedPeer {
  const child = spawn(process.execPath, args, {
    stdio: ["pipe", "pipe", "pipe"],
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = exitAfterOutput(child, [child.stderr]);
  return {
    child,
    output: Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    input: Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    stderr: () => stderr,
    exited,
  };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long after its exit a process's output may still take to be read to its end. */
const OUTPUT_AFTER_EXIT_LIMIT_MS = 5_000;

/**
 * The process's exit, once `outputs` (streams the caller reads: stderr, stdout) were also read to
 * their end. Node may emit 'exit' before the last bytes the process wrote were read, so text
 * collected at 'exit' can lack its last lines (a summary, an error). Listen from the spawn on: a
 * stream that already closed is not missed. A grandchild that inherited a stream can hold it open
 * long after the exit: that wait is bounded, and then the exit is returned as it is.
 */
export function exitAfterOutput(child: ChildProcess, outputs: NodeJS.ReadableStream[]): Promise<Exit> {
  const closed = Promise.all(outputs.map((stream) => new Promise<void>((resolve) => stream.once("close", () => resolve()))));
  const exit = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return exit.then(async (result) => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, OUTPUT_AFTER_EXIT_LIMIT_MS)))]);
    clearTimeout(timer);
    return result;
  });
}

export interface WireRecord {
  direction: "out" | "in";
  message: Record<string, unknown>;
}

/**
 * Records every message crossing an object stream, in both directions, without changing
 * them: the test's view of the wire.
 */
export function tap<S extends MessageStream>(stream: S, log: WireRecord[]): S {
  // Every message on a tapped wire must validate against its version's official schema.
  const conformance = new ConformanceTracker("tapped wire");
  const readable = stream.readable.pipeThrough(
    new TransformStream<unknown, unknown>({
      transform(message, controller) {
        conformance.see("b", message);
        log.push({ direction: "in", message: message as Record<string, unknown> });
        controller.enqueue(message);
      },
    }),
  );
  const writer = stream.writable.getWriter();
  const writable = new WritableStream<unknown>({
    async write(message) {
      conformance.see("a", message);
      log.push({ direction: "out", message: message as Record<string, unknown> });
      await writer.write(message);
    },
    async close() {
      await writer.close();
    },
    async abort(reason) {
      await writer.abort(reason);
    },
  });
  return { readable, writable } as S;
}

/** Collects every ndjson line a stream emits, parsed, into an array (for raw-line tests). */
export function collectLines(stream: NodeJS.ReadableStream): Record<string, unknown>[] {
  const received: Record<string, unknown>[] = [];
  // What a placement writes to a raw peer must validate too (answers: their envelope and errors,
  // since the raw peer's requests are not seen here).
  const conformance = new ConformanceTracker("raw lines");
  let buffer = "";
  stream.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      conformance.see("b", message);
      received.push(message);
    }
  });
  return received;
}

/** Ends the peer's stdin and waits for it to exit, SIGKILLing it if it hangs past `killAfterMs`. */
export async function endAndAwaitExit(
  peer: SpawnedPeer,
  killAfterMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  peer.child.stdin.end();
  const timer = setTimeout(() => peer.child.kill("SIGKILL"), killAfterMs);
  const exit = await peer.exited;
  clearTimeout(timer);
  return exit;
}
