/**
 * Shared pieces of the reliability suite: the soak switch, a raw ndjson peer (the test's own
 * editor, which counts every line it gets), process helpers (pids, RSS) and figures.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { CLI } from "../support/bridge-harness.js";
import { exitAfterOutput, fixturePath } from "../support/spawn-peer.js";
import { eventually, HANG_LIMIT_MS } from "../support/wire-assertions.js";

/** `ACP_CANCEL_SOAK=1` (npm run test:soak) scales every loop of the suite up. */
export const SOAK = !["", "0", "false", undefined].includes(process.env.ACP_CANCEL_SOAK);

/** `normal` runs by default, `soak` under ACP_CANCEL_SOAK. */
export function scaled(normal: number, soak: number): number {
  return SOAK ? soak : normal;
}

/**
 * fast-check parameters: `runs` runs, or a replay of one failure (ACP_CANCEL_FC_SEED and
 * ACP_CANCEL_FC_PATH, as fast-check printed them).
 */
export function checkParameters(runs: number): { numRuns: number; seed?: number; path?: string } {
  const seed = Number(process.env.ACP_CANCEL_FC_SEED);
  if (!Number.isInteger(seed)) return { numRuns: runs };
  const path = process.env.ACP_CANCEL_FC_PATH;
  return path === undefined ? { numRuns: runs, seed } : { numRuns: runs, seed, path };
}

/** Prints one figure line for docs/reliability.md (grep the soak output for "[reliability]"). */
export function figure(text: string): void {
  console.log(`      [reliability] ${text}`);
}

export type Message = Record<string, unknown>;

export const isResponse = (m: Message) => !("method" in m) && "id" in m;
export const isRequest = (m: Message) => "method" in m && "id" in m;

/**
 * The editor's end of a real process, at the byte level: lines in, lines out, nothing
 * interpreted by an SDK. Every line the process writes is kept (parsed, or as garbage),
 * so a test can count answers per id exactly.
 */
export class RawPeer {
  readonly received: Message[] = [];
  /** Lines that were not JSON objects: the bridge must never write one to the editor. */
  readonly garbage: string[] = [];
  private buffer = "";
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private auto: ((request: Message) => Message | undefined) | undefined;
  private paused: Promise<void> | undefined;
  private resumeReading: (() => void) | undefined;
  private nodeInput: Readable | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private closed = false;
  ended = false;

  /**
   * `input` is the process's stdout: a Node stream, or the web stream the shared harnesses
   * (spawnBridge, spawnFixture) already made of it. That web stream must be the one read:
   * left unread, it pauses the Node stream under it as soon as its queue fills.
   */
  constructor(
    input: Readable | ReadableStream<Uint8Array>,
    private readonly output: Writable,
  ) {
    output.on("error", () => {});
    if (input instanceof ReadableStream) {
      void this.pump(input.getReader());
    } else {
      this.nodeInput = input;
      input.on("data", (chunk: Buffer) => this.take(chunk));
      input.on("end", () => {
        this.ended = true;
      });
    }
  }

  /** Closes the editor's reading end of the process's stdout (as an editor that quits does). */
  async close(): Promise<void> {
    this.closed = true;
    this.nodeInput?.destroy();
    await this.reader?.cancel().catch(() => {});
  }

  private async pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    this.reader = reader;
    try {
      for (;;) {
        await this.paused;
        const { value, done } = await reader.read();
        if (done) break;
        this.take(value);
      }
    } catch {
      // the process went away, or close() cancelled the read
    }
    this.ended = !this.closed || this.ended;
  }

  /** Stops reading: the process's writes fill the pipe, then wait. */
  stopReading(): void {
    this.nodeInput?.pause();
    this.paused ??= new Promise((resolve) => {
      this.resumeReading = resolve;
    });
  }

  resume(): void {
    const resume = this.resumeReading;
    this.paused = undefined;
    this.resumeReading = undefined;
    resume?.();
    this.nodeInput?.resume();
  }

  /** Bytes of lines received so far (for floods, where keeping every message is wasteful). */
  bytes = 0;
  /** When set, messages it returns true for are not kept (floods: count them in the callback). */
  countOnly: ((message: Message) => boolean) | undefined;

  /** Answers every request from the other side with `answer(request)` (undefined: never). */
  answerRequests(answer: (request: Message) => Message | undefined): void {
    this.auto = answer;
  }

  private take(chunk: Uint8Array): void {
    this.bytes += chunk.byteLength;
    this.buffer += this.decoder.decode(chunk, { stream: true });
    for (let newline = this.buffer.indexOf("\n"); newline !== -1; newline = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        this.garbage.push(line);
        continue;
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        this.garbage.push(line);
        continue;
      }
      const message = value as Message;
      if (this.countOnly?.(message)) continue;
      this.received.push(message);
      if (this.auto !== undefined && isRequest(message)) {
        const answer = this.auto(message);
        if (answer !== undefined) this.send(answer);
      }
    }
  }

  /** Writes one message (an object is serialised, a string is sent as the line itself). */
  send(message: Message | string): boolean {
    if (this.output.destroyed || this.output.writableEnded) return false;
    return this.output.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
  }

  /** Writes raw bytes, honouring backpressure. */
  async write(bytes: Buffer | string): Promise<void> {
    if (this.output.write(bytes)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.output.off("drain", done);
        this.output.off("close", done);
        resolve();
      };
      this.output.on("drain", done);
      this.output.on("close", done);
    });
  }

  end(): void {
    this.output.end();
  }

  responsesTo(id: unknown): Message[] {
    return this.received.filter((m) => isResponse(m) && sameId(m.id, id));
  }

  answer(id: unknown, limitMs = HANG_LIMIT_MS): Promise<Message> {
    return eventually(
      () => this.received.find((m) => isResponse(m) && sameId(m.id, id)),
      `an answer to ${JSON.stringify(id)}`,
      limitMs,
    );
  }

  requestsFrom(method?: string): Message[] {
    return this.received.filter((m) => isRequest(m) && (method === undefined || m.method === method));
  }
}

/** JSON-RPC ids compare by value; -0 and 0 are one id once serialised. */
export function sameId(a: unknown, b: unknown): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

export const initialize = (id: unknown, clientCapabilities: Message = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: 1, clientCapabilities },
});

export const newSession = (id: unknown) => ({
  jsonrpc: "2.0",
  id,
  method: "session/new",
  params: { cwd: "/", mcpServers: [] },
});

export const prompt = (id: unknown, sessionId: string, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "session/prompt",
  params: { sessionId, prompt: [{ type: "text", text }] },
});

export const cancelRequest = (requestId: unknown) => ({
  jsonrpc: "2.0",
  method: "$/cancel_request",
  params: { requestId },
});

/** initialize + session/new over a raw peer; returns the session id. */
export async function openRawSession(peer: RawPeer, capabilities: Message = {}): Promise<string> {
  peer.send(initialize("init", capabilities));
  await peer.answer("init");
  peer.send(newSession("new"));
  const answer = await peer.answer("new");
  return (answer.result as { sessionId: string }).sessionId;
}

/** The pid a fixture printed on stderr as "<label> pid N". */
export function pidFrom(stderr: string, label: string): number | undefined {
  const match = new RegExp(`${label} pid (\\d+)`).exec(stderr);
  return match ? Number(match[1]) : undefined;
}

/** Resident set size of a live process, in MiB (VmRSS from /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) / 1024;
}

export interface PlainBridge {
  child: ChildProcessWithoutNullStreams;
  peer: RawPeer;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `acp-cancel bridge [args] -- node <fixture> [agentArgs]` without a trace file, for the memory
 * tests: the trace writer is a debugging aid that queues every line it writes, so it is kept
 * out of RSS figures (docs/reliability.md says why).
 */
export function spawnPlainBridge(bridgeArgs: string[], fixture: string, agentArgs: string[] = []): PlainBridge {
  const child = spawn(
    process.execPath,
    [CLI, "bridge", ...bridgeArgs, "--", process.execPath, fixturePath(fixture), ...agentArgs],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = exitAfterOutput(child, [child.stderr]);
  return { child, peer: new RawPeer(child.stdout, child.stdin), stderr: () => stderr, exited };
}

/** Waits for a process to exit, SIGKILLing it after `limitMs` so a hung test cannot leak it. */
export async function exitOf(
  child: ChildProcessWithoutNullStreams,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  limitMs = HANG_LIMIT_MS,
) {
  const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
  const exit = await exited;
  clearTimeout(timer);
  return exit;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A small deterministic PRNG (mulberry32), so a failing fault run can be replayed from its seed. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed for a loop of random faults: ACP_CANCEL_SEED replays one, otherwise a fresh one. */
export function faultSeed(): number {
  const given = Number(process.env.ACP_CANCEL_SEED);
  return Number.isInteger(given) ? given : Math.floor(Math.random() * 2 ** 31);
}

/** Processes a test started, so that a failing test cannot leave them behind. */
const started: { child: ChildProcessWithoutNullStreams; stderr: () => string }[] = [];

/** Registers a bridge (or fixture) process for `killLeftovers`. */
export function track<T extends { child: ChildProcessWithoutNullStreams; stderr: () => string }>(process: T): T {
  started.push(process);
  return process;
}

/**
 * SIGKILLs whatever a test started and left running: the process itself, and the agent and
 * grandchild whose pids it reported on stderr. Use in afterEach.
 */
export function killLeftovers(): void {
  for (const { child, stderr } of started.splice(0)) {
    const pids = ["agent", "grandchild"].map((label) => pidFrom(stderr(), label));
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const pid of pids) {
      if (pid === undefined) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}
